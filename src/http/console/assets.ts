/**
 * The console's two static assets, shipped inside the package (compiled with the rest by tsc; no
 * CDN, no web font): its stylesheet and its one small script. The script only enhances pages that
 * work without it: live status over the run status stream (EventSource), and a confirmation before
 * a cancel. Served by routes/console.ts under /console/assets/ with an ETag.
 */
import { createHash } from 'node:crypto';
import { AGENT_CHAT_JS } from './agent-script';

export const CONSOLE_CSS = `
:root{--fg:#1d1f23;--muted:#4a5160;--bg:#fff;--panel:#f4f6f8;--line:#c9ced6;--accent:#0b57d0;--ok:#146c2e;--bad:#b3261e;--warn:#7a4f00;--focus:#ffb000}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:2}
header.top{display:flex;align-items:center;gap:1.5rem;padding:.6rem 1.5rem;background:#16233a;color:#fff}
header.top a{color:#fff;text-decoration:none}header.top a:hover,header.top a[aria-current="page"]{text-decoration:underline}
header.top .brand{font-weight:700;font-size:1.1rem}
header.top nav{display:flex;gap:1rem;flex:1}
header.top form{margin:0}
header.top button{background:transparent;color:#fff;border:1px solid #fff;padding:.25rem .75rem}
main{max-width:72rem;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.6rem;margin:.8rem 0}h2{font-size:1.2rem;margin:1.6rem 0 .6rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--panel)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
pre{background:var(--panel);padding:.75rem;overflow:auto;max-height:24rem;white-space:pre-wrap;word-break:break-word;border:1px solid var(--line)}
label{display:block;font-weight:600;margin:.6rem 0 .2rem}
.hint{color:var(--muted);font-size:.9rem;margin:.1rem 0}
input,select,textarea{font:inherit;padding:.4rem .5rem;border:1px solid #6b7280;border-radius:4px;background:#fff;color:var(--fg)}
textarea{width:100%;min-height:5rem}
input[type=text],input[type=password],input[type=number],input[type=date],input[type=datetime-local]{min-width:16rem}
button,.button{font:inherit;padding:.45rem 1.1rem;border-radius:4px;border:1px solid #16233a;background:#16233a;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,a.secondary-link{background:#fff;color:#16233a}
button.link{background:none;border:0;padding:0;color:var(--accent);text-decoration:underline}form.inline.run-link{display:inline-flex}
button.approve{background:var(--ok);border-color:var(--ok)}button.reject,button.danger{background:var(--bad);border-color:var(--bad)}
.filters{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-end;background:var(--panel);padding:.75rem 1rem;border:1px solid var(--line)}
.filters label{margin:0 0 .2rem}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end;margin:1rem 0}
.actions form{margin:0}
.status{display:inline-block;font-weight:700;font-size:.85rem;padding:.05rem .5rem;border-radius:3px;border:1px solid currentColor}
.status-COMPLETE{color:var(--ok)}.status-FAILED,.status-TIMEOUT{color:var(--bad)}.status-CANCELLED{color:var(--muted)}.status-PAUSED{color:var(--warn)}.status-RUNNING,.status-PENDING{color:var(--accent)}.status-SKIPPED{color:var(--muted)}
ol.timeline{list-style:none;padding:0;margin:0;border-left:3px solid var(--line)}
ol.timeline>li{margin:0 0 1rem 0;padding:.25rem 0 .25rem 1rem;position:relative}
ol.timeline>li::before{content:"";position:absolute;left:-.55rem;top:.7rem;width:.8rem;height:.8rem;border-radius:50%;background:var(--line)}
ol.timeline>li.s-COMPLETE::before{background:var(--ok)}ol.timeline>li.s-FAILED::before,ol.timeline>li.s-TIMEOUT::before{background:var(--bad)}ol.timeline>li.s-PAUSED::before{background:var(--warn)}ol.timeline>li.s-RUNNING::before{background:var(--accent)}
.meta{color:var(--muted);font-size:.9rem}
form.inline{display:flex;gap:.4rem;align-items:center;margin:0}dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dl.facts dt{font-weight:600}dl.facts dd{margin:0}
.panel{border:1px solid var(--line);padding:1rem;margin:1rem 0;background:#fff}
.notice{border-left:4px solid var(--accent);background:var(--panel);padding:.6rem 1rem;margin:1rem 0}
.error{border-left:4px solid var(--bad);background:#fdecea;padding:.6rem 1rem;margin:1rem 0}
.signin{max-width:28rem;margin:4rem auto}
.conversation,.tool-calls,ul.plain{list-style:none;padding:0;margin:0}
.exchange{border:1px solid var(--line);padding:.75rem 1rem;margin:1rem 0}
.msg .who{font-weight:700;margin:.2rem 0}.msg .text{white-space:pre-wrap;margin:.2rem 0 .6rem}
.tool-call{border-left:4px solid var(--ok);background:var(--panel);padding:.3rem .75rem;margin:.5rem 0}.tool-call.pending{border-left-color:var(--accent)}.tool-call.failed{border-left-color:var(--bad)}
.tool-call p{margin:.2rem 0}.tool-call pre{max-height:12rem;margin:.3rem 0}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
textarea.code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem;min-height:24rem}
fieldset{border:1px solid var(--line);margin:.6rem 0;padding:.4rem .8rem}fieldset label{font-weight:400}
ol.listing{font-size:.85rem;background:var(--panel);border:1px solid var(--line);padding:.5rem .5rem .5rem 3.5rem;max-height:32rem;overflow:auto}
ol.listing li{white-space:pre-wrap}ol.listing li.bad{background:#fdecea;outline:1px solid var(--bad)}ol.listing li:target{outline:3px solid var(--focus)}
ol.listing .problem{color:var(--bad);font-weight:600;white-space:normal}
table.diff td{padding:.05rem .5rem;border:0;white-space:pre-wrap}table.diff td.n{color:var(--muted);text-align:right;width:3rem}
table.diff tr.d-added{background:#e6f4ea}table.diff tr.d-removed{background:#fdecea}
ul.triggers li{margin-bottom:.8rem}
`;

/** Plain ES2017 for any current browser; no framework, no build step beyond this string. */
export const CONSOLE_JS = `'use strict';
(function () {
  var live = document.querySelector('[data-run-stream]');
  if (live && typeof EventSource === 'function') {
    var url = live.getAttribute('data-run-stream') + '?lastEventId=' + encodeURIComponent(live.getAttribute('data-last-event') || '0');
    var source = new EventSource(url);
    var reload = function () { source.close(); setTimeout(function () { location.reload(); }, 250); };
    source.addEventListener('step', reload);
    source.addEventListener('end', reload);
    source.addEventListener('gap', reload);
  }
  var table = document.querySelector('[data-runs-live]');
  if (table && typeof EventSource === 'function') {
    var runs = new EventSource(table.getAttribute('data-runs-live'));
    runs.addEventListener('status', function (event) {
      var data = JSON.parse(event.data);
      var cell = document.querySelector('[data-run-status="' + CSS.escape(data.runId) + '"]');
      if (!cell) return;
      var shown = data.reasonCode === 'CANCELLED' ? 'CANCELLED' : data.status;
      cell.textContent = shown;
      cell.className = 'status status-' + shown;
    });
    runs.addEventListener('done', function () { runs.close(); });
  }
  document.addEventListener('submit', function (event) {
    var form = event.target;
    var question = form && form.getAttribute && form.getAttribute('data-confirm');
    if (question && !window.confirm(question)) event.preventDefault();
  });
})();
`;

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(text: string, type: string): Asset {
  const body = Buffer.from(text, 'utf8');
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export const ASSETS: Readonly<Record<string, Asset>> = Object.freeze({
  'console.css': asset(CONSOLE_CSS, 'text/css; charset=utf-8'),
  'console.js': asset(CONSOLE_JS, 'text/javascript; charset=utf-8'),
  'agent-chat.js': asset(AGENT_CHAT_JS, 'text/javascript; charset=utf-8'),
});
