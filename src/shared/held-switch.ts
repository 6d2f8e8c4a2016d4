/**
 * A setting that is on while anyone holds it, such as a relay dropping
 * credential headers for each plugin that asked: `hold()` turns it on and
 * returns the holder's release (calling it again does nothing); the last
 * release turns it off. `onChange` hears only those two moments.
 *
 * @module
 */

export class HeldSwitch {
  #holders = 0;

  constructor(private readonly onChange: (on: boolean) => void) {}

  get on(): boolean {
    return this.#holders > 0;
  }

  hold(): () => void {
    if (this.#holders++ === 0) this.onChange(true);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holders === 0) this.onChange(false);
    };
  }
}
