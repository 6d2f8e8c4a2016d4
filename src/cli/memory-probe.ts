/**
 * Peak resident memory of the CLI process, for the hidden `--report-memory`
 * flag the streaming tests read. `process.resourceUsage().maxRSS` (KiB) is
 * the kernel's own peak where the runtime has it; sampled `rss` covers
 * runtimes without it.
 *
 * @module
 */

export class MemoryProbe {
  #peakBytes = 0;

  sample(): void {
    try {
      const rss = process.memoryUsage.rss?.() ?? process.memoryUsage().rss;
      if (rss > this.#peakBytes) this.#peakBytes = rss;
    } catch {
      // No memory information on this runtime.
    }
  }

  /** The peak in KiB. */
  peakKb(): number {
    this.sample();
    let kernelPeak = 0;
    try {
      kernelPeak = process.resourceUsage?.().maxRSS ?? 0;
    } catch {
      kernelPeak = 0;
    }
    return Math.max(kernelPeak, Math.round(this.#peakBytes / 1024));
  }
}
