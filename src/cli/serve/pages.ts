/**
 * The served viewer's own page (the index of sessions) and the script that
 * keeps a served timeline or compare page live. The index asks the server
 * for the sessions and listens to its event stream: new sessions and
 * changed files appear in place, without a reload. The server filters and
 * pages the index: the page asks for the 200 rows it shows (more on
 * request), so a folder or file of tens of thousands of sessions stays quick.
 *
 * @module
 */

import { escape, page } from '../view/html.ts';

export function indexPage(folders: readonly string[], generator: string): string {
  return page(
    'Sessions · NeMo Relay viewer',
    `<header><h1>NeMo Relay sessions</h1>
<div class="tools" role="toolbar"><input id="q" type="search" placeholder="Filter sessions (/)" aria-label="Filter sessions"><label><input id="errors" type="checkbox"> With errors only</label>
<button id="compare" disabled>Compare selected</button><span id="count" class="muted"></span><span id="live" class="muted">connecting…</span></div></header>
<p class="facts">Folders: ${folders.map((folder) => `<code>${escape(folder)}</code>`).join(', ')}. Tick two sessions (x or space) and press Compare (c).</p>
<table class="index"><thead><tr><th></th><th>session</th><th>started</th><th>duration</th><th>calls</th><th>tokens (Σ)</th><th>cost (Σ)</th><th>errors</th><th>file</th></tr></thead><tbody id="rows"></tbody></table>
<p><button id="more" hidden>Show more</button></p>
<div id="problems" class="muted"></div>
<footer>Served by ${escape(generator)}. ↑/↓ or j/k move, Enter opens, x or space ticks, c compares, / filters. The list follows the folders as agents write.</footer>
<script>${INDEX_JS}</script>`,
    INDEX_CSS,
    true,
  );
}

/**
 * A served page's live script: when the server says one of `files` changed,
 * the page fetches itself again and replaces its document in place (the
 * window, and its state, stays), keeping the search, the selected row and
 * the scroll position.
 */
export function liveScript(files: readonly string[], version: number): string {
  return `(function(){
'use strict';
var files=${JSON.stringify(files).replace(/</g, '\\u003c')},version=${version};
function state(){var q=document.getElementById('q'),sel=document.querySelector('.row.selected,.pair.selected');return {y:window.scrollY,q:q?q.value:'',sel:sel?(sel.getAttribute('data-id')||sel.getAttribute('data-i')):null};}
function restore(s){var q=document.getElementById('q');if(q&&s.q){q.value=s.q;q.dispatchEvent(new Event('input'));}
 if(s.sel!==null){var r=document.querySelector('.row[data-id="'+s.sel+'"],.pair[data-i="'+s.sel+'"]');if(r)r.click();}window.scrollTo(0,s.y);}
if(window.nrhLiveState){var s=window.nrhLiveState;window.nrhLiveState=null;restore(s);}
if(window.nrhLive)window.nrhLive.close();
var es=new EventSource('/api/events');window.nrhLive=es;var busy=false;
function reload(){if(busy)return;busy=true;
 fetch(location.href,{cache:'no-store'}).then(function(r){return r.ok?r.text():null;}).then(function(html){busy=false;if(html===null)return;
  window.nrhLiveState=state();window.nrhUpdates=(window.nrhUpdates||0)+1;es.close();document.open();document.write(html);document.close();
  }).catch(function(){busy=false;});}
// A change that landed while this page was being fetched: the stream's first message says so.
es.addEventListener('hello',function(e){if(JSON.parse(e.data).version>version)reload();});
es.addEventListener('change',function(e){var d=JSON.parse(e.data);for(var i=0;i<d.files.length;i++)if(files.indexOf(d.files[i])!==-1){reload();return;}});
document.documentElement.setAttribute('data-live','1');
})();`;
}

const INDEX_CSS = `
table.index td.sel{width:1.5em}tr.focus{outline:2px solid var(--llm);outline-offset:-2px}tr.new{animation:flash 2s ease-out}
@keyframes flash{from{background:var(--hit)}to{background:transparent}}#live.on{color:var(--tool)}code{font-size:12px}
@media (max-width:760px){
table.index td.sel{float:left;width:auto;padding-right:.5rem}
table.index td:nth-child(3)::before{content:'started '}table.index td:nth-child(4)::before{content:'duration '}table.index td:nth-child(5)::before{content:'calls '}
table.index td:nth-child(6)::before{content:'tokens (Σ) '}table.index td:nth-child(7)::before{content:'cost (Σ) '}table.index td:nth-child(8)::before{content:'errors '}
table.index td:nth-child(6):empty,table.index td:nth-child(7):empty{display:none}
}
`;

const INDEX_JS = `
(function(){
'use strict';
var PAGE=200;
var tbody=document.getElementById('rows'),q=document.getElementById('q'),errs=document.getElementById('errors'),count=document.getElementById('count'),live=document.getElementById('live'),more=document.getElementById('more'),cmp=document.getElementById('compare'),problems=document.getElementById('problems');
var shown=[],total=0,matched=0,first=null,picked=[],limit=PAGE,focus=0,asked=0;
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!==undefined)e.textContent=text;return e;}
function render(){tbody.textContent='';
 shown.forEach(function(s,i){var tr=el('tr',(s.errors?'failed':'')+(first!==null&&s.since>first?' new':''));tr.setAttribute('data-key',s.key);
  var td=el('td','sel');var box=el('input');box.type='checkbox';box.checked=picked.indexOf(s.key)!==-1;box.setAttribute('aria-label','select '+s.title);box.addEventListener('change',function(){toggle(s.key);});td.appendChild(box);tr.appendChild(td);
  var name=el('td');var a=el('a','',s.title);a.href='/session?key='+encodeURIComponent(s.key);name.appendChild(a);if(s.note){name.appendChild(document.createTextNode(' '));name.appendChild(el('small','',s.note));}(s.notes||[]).forEach(function(n){name.appendChild(el('div','muted',n));});tr.appendChild(name);
  tr.appendChild(el('td','',s.text.started));
  tr.appendChild(el('td','num',s.text.duration));tr.appendChild(el('td','num',s.llmCalls+' LLM, '+s.toolCalls+' tool'));
  tr.appendChild(el('td','num',s.text.tokens));
  tr.appendChild(el('td','num',s.text.cost));tr.appendChild(el('td','num'+(s.errors?' bad':''),String(s.errors)));tr.appendChild(el('td','muted',s.file+' ('+s.kind.toUpperCase()+')'));
  if(i===focus)tr.classList.add('focus');tbody.appendChild(tr);});
 more.hidden=matched<=shown.length;more.textContent='Show more ('+(matched-shown.length)+' not shown)';
 count.textContent=matched+' of '+total+' sessions';cmp.disabled=picked.length!==2;cmp.textContent=picked.length===2?'Compare selected (2)':'Compare selected ('+picked.length+'/2)';}
function toggle(key){var i=picked.indexOf(key);if(i!==-1)picked.splice(i,1);else{picked.push(key);if(picked.length>2)picked.shift();}render();}
// The server filters and pages; an answer to an older question than the last one asked is dropped.
function load(){var mine=++asked;var query='?limit='+limit+'&q='+encodeURIComponent(q.value)+(errs.checked?'&errors=1':'');
 return fetch('/api/sessions'+query,{cache:'no-store'}).then(function(r){return r.json();}).then(function(d){if(mine!==asked)return;
 if(first===null)first=d.version;shown=d.sessions;total=d.total;matched=d.matched;if(focus>=shown.length)focus=Math.max(0,shown.length-1);
 problems.textContent=d.problems.length?'Not read: '+d.problems.map(function(p){return p.file+' ('+p.problem+')';}).join('; '):'';
 document.documentElement.setAttribute('data-version',String(d.version));render();});}
more.addEventListener('click',function(){limit+=PAGE;load();});
var timer=null;q.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(function(){limit=PAGE;focus=0;load();},120);});errs.addEventListener('change',function(){limit=PAGE;focus=0;load();});
function compare(){if(picked.length===2)location.href='/compare?a='+encodeURIComponent(picked[0])+'&b='+encodeURIComponent(picked[1]);}
cmp.addEventListener('click',compare);
document.addEventListener('keydown',function(ev){
 if(ev.target===q){if(ev.key==='Escape'){q.value='';limit=PAGE;load();q.blur();}if(ev.key==='ArrowDown'||ev.key==='Enter'){ev.preventDefault();q.blur();focus=0;render();}return;}
 if(ev.key==='/'){ev.preventDefault();q.focus();return;}
 var rows=tbody.querySelectorAll('tr');if(!rows.length)return;
 if(ev.key==='ArrowDown'||ev.key==='j'){ev.preventDefault();focus=Math.min(rows.length-1,focus+1);render();}
 else if(ev.key==='ArrowUp'||ev.key==='k'){ev.preventDefault();focus=Math.max(0,focus-1);render();}
 else if(ev.key==='x'||ev.key===' '){ev.preventDefault();var r=rows[focus];if(r)toggle(r.getAttribute('data-key'));}
 else if(ev.key==='Enter'){var r2=rows[focus];if(r2)location.href=r2.querySelector('a').href;}
 else if(ev.key==='c'){compare();}
});
var es=new EventSource('/api/events');
es.addEventListener('hello',function(){live.textContent='live';live.className='muted on';});
es.addEventListener('change',function(){load().then(function(){live.textContent='live · updated '+new Date().toLocaleTimeString();});});
es.onerror=function(){live.textContent='disconnected (retrying)';live.className='muted';};
load().then(function(){document.documentElement.setAttribute('data-ready','1');});
})();
`;
