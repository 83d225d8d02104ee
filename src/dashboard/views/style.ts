// The dashboard's one stylesheet: system fonts, light and dark from the browser's preference, usable at 375 px.
export const STYLESHEET = `
:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --panel: #ffffff; --text: #16181d; --muted: #596170; --line: #d9dde4;
  --accent: #3b4fd8; --accent-text: #ffffff; --danger: #b42318; --ok: #067647; --warn: #9a5b00;
  --focus: #f59e0b; --code: #eef0f4;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #111318; --panel: #1a1d24; --text: #e8eaef; --muted: #a3abb9; --line: #2f3440;
    --accent: #8b9cff; --accent-text: #0c0e14; --danger: #ff8a80; --ok: #6ee7a8; --warn: #fbbf24;
    --focus: #fbbf24; --code: #252a34;
  }
}
* { box-sizing: border-box; }
html { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--text); }
body { margin: 0; min-height: 100vh; display: flex; flex-direction: column; }
a { color: var(--accent); }
:focus-visible, input:focus, input:focus-within, select:focus, textarea:focus { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--panel); padding: .5rem 1rem; z-index: 2; }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; padding: .75rem 1.25rem;
  background: var(--panel); border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; text-decoration: none; color: var(--text); }
header.top .account { color: var(--muted); font-size: .9rem; }
header.top form { margin-left: auto; display: flex; gap: .5rem; align-items: center; }
nav.pages ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 0; padding: .5rem 1.25rem;
  border-bottom: 1px solid var(--line); background: var(--panel); }
nav.pages a { display: block; padding: .35rem .7rem; border-radius: 6px; text-decoration: none; color: var(--text); }
nav.pages a[aria-current="page"] { background: var(--accent); color: var(--accent-text); }
main { width: 100%; max-width: 72rem; margin: 0 auto; padding: 1.25rem; flex: 1; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .75rem; }
p.muted, .muted { color: var(--muted); }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin-bottom: 1rem; }
.panel > :first-child { margin-top: 0; }
.narrow { max-width: 26rem; margin: 3rem auto; }
.table-wrap { overflow-x: auto; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: .55rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: .85rem; }
tr:last-child td { border-bottom: 0; }
form.inline { display: inline-flex; flex-wrap: wrap; gap: .5rem .75rem; align-items: end; margin: 0; }
form.inline.panel { display: flex; }
.actions { display: flex; flex-wrap: wrap; gap: .4rem .75rem; align-items: flex-end; }
form.stack { display: grid; gap: .75rem; }
label { font-weight: 600; font-size: .9rem; display: grid; gap: .3rem; }
input, select, textarea { font: inherit; font-weight: 400; color: var(--text); background: var(--bg); border: 1px solid var(--muted);
  border-radius: 6px; padding: .45rem .6rem; min-height: 2.5rem; max-width: 100%; }
button { font: inherit; cursor: pointer; border-radius: 6px; padding: .45rem .9rem; min-height: 2.5rem;
  border: 1px solid var(--accent); background: var(--accent); color: var(--accent-text); }
button.secondary { background: transparent; color: var(--accent); }
button.danger { background: transparent; color: var(--danger); border-color: var(--danger); }
.notice { border-left: 4px solid var(--accent); padding: .6rem .9rem; background: var(--panel); margin-bottom: 1rem; }
.notice.error { border-color: var(--danger); }
.notice.ok { border-color: var(--ok); }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 999px; font-size: .8rem; border: 1px solid var(--line); }
code, .code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--code); padding: 0 .25rem;
  border-radius: 4px; font-size: .9em; overflow-wrap: anywhere; }
.pager { display: flex; gap: 1rem; margin-top: 1rem; }
.cards-row { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .75rem; margin-bottom: 1rem; }
.stat { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; }
.stat .value { font-size: 1.5rem; font-weight: 700; display: block; }
.stat .label { color: var(--muted); font-size: .85rem; }
.tabs { display: flex; gap: .5rem; margin-bottom: 1rem; flex-wrap: wrap; }
.tabs a { padding: .35rem .8rem; border: 1px solid var(--line); border-radius: 999px; text-decoration: none; color: var(--text); }
.tabs a[aria-current="page"] { background: var(--accent); color: var(--accent-text); border-color: var(--accent); }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .axis { fill: var(--muted); font-size: 11px; }
svg.chart polyline { fill: none; stroke-width: 2; vector-effect: non-scaling-stroke; }
.series-queued { --c: var(--muted); } .series-sent { --c: var(--accent); } .series-delivered { --c: var(--ok); }
.series-bounced { --c: var(--warn); } .series-complained { --c: #a855f7; } .series-failed { --c: var(--danger); }
svg.chart .series polyline { stroke: var(--c); }
svg.chart .series circle { fill: var(--c); }
.legend { list-style: none; display: flex; flex-wrap: wrap; gap: .5rem 1rem; padding: 0; margin: .5rem 0 0; font-size: .9rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; background: var(--c); margin-right: .35rem; vertical-align: -1px; }
details summary { cursor: pointer; margin: .5rem 0; }
input.secret { width: 100%; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
fieldset.inline { border: 0; padding: 0; margin: 0; display: flex; gap: .25rem 1rem; flex-wrap: wrap; align-items: center; }
fieldset.inline legend { font-weight: 600; font-size: .9rem; padding: 0; margin-bottom: .3rem; }
label.check { display: inline-flex; gap: .4rem; align-items: center; font-weight: 400; }
label.check input { min-height: 0; }
.copyable { display: flex; gap: .5rem; align-items: flex-start; }
code.record { overflow-wrap: anywhere; word-break: break-all; }
button.small { min-height: 2rem; padding: .2rem .6rem; font-size: .85rem; }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0 0 1rem; }
dl.fields dt { color: var(--muted); font-size: .9rem; }
dl.fields dd { margin: 0; overflow-wrap: anywhere; }
.editor { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.editor textarea { width: 100%; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9rem; }
iframe.preview.text { height: 10rem; }
/* Previews are pictures of mail and pages (sandboxed, no script): out of the tab order (tabindex -1). */
iframe.preview { width: 100%; height: 28rem; border: 1px solid var(--line); border-radius: 8px; background: #fff; }
pre.text-body { white-space: pre-wrap; background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
  padding: 1rem; overflow-wrap: anywhere; }
.status-sent, .status-delivered { border-color: var(--ok); color: var(--ok); }
.status-failed, .status-bounced, .status-complained { border-color: var(--danger); color: var(--danger); }
.status-scheduled, .status-queued { border-color: var(--accent); color: var(--accent); }
@media (max-width: 56rem) { .editor { grid-template-columns: 1fr; } }
@media (max-width: 40rem) { dl.fields { grid-template-columns: 1fr; gap: 0 1rem; } dl.fields dd { margin-bottom: .4rem; } }
footer { color: var(--muted); font-size: .85rem; padding: 1rem 1.25rem; text-align: center; }
@media (max-width: 40rem) {
  main { padding: .75rem; }
  header.top form { margin-left: 0; }
  /* Tables become one card per row, each cell under its column's name. */
  table.cards thead { display: none; }
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; }
  table.cards tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  table.cards tr:last-child { border-bottom: 0; }
  table.cards td { border: 0; padding: .25rem .75rem; }
  table.cards td[data-label]::before { content: attr(data-label); display: block; font-size: .8rem; color: var(--muted); }
}
`;
