/** Server-rendered HTML: every interpolated value goes through `esc`. */
export const esc = (v: unknown): string =>
  String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export interface Viewer {
  userId: string;
  workspace: string;
  csrf: string;
  staff: boolean;
  reconciler: boolean;
  approver: boolean;
  /** The IANA time zone times are shown in: the viewer's preference, UTC until they set one. */
  timeZone: string;
}

export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

const STYLE = `
*{box-sizing:border-box}body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#fff}
header{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;padding:.6rem 1.2rem;background:#12355b;color:#fff}
header a{color:#fff}header nav{display:flex;gap:1rem;flex-wrap:wrap}header .who{margin-left:auto;display:flex;gap:.6rem;align-items:center}
main{max-width:78rem;margin:0 auto;padding:1rem 1.2rem 3rem}h1{font-size:1.45rem;margin:.6rem 0 1rem}h2{font-size:1.15rem;margin:1.6rem 0 .6rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #b8c0c8;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#eef2f6}code,.mono{font:13px ui-monospace,monospace;word-break:break-all}
a{color:#0b4f9c}a:focus,button:focus,input:focus,select:focus,textarea:focus{outline:3px solid #f5a623;outline-offset:1px}
form.inline{display:inline-block;margin:.2rem .4rem .2rem 0}fieldset{border:1px solid #b8c0c8;margin:.5rem 0;padding:.5rem .8rem}
label{display:block;margin:.3rem 0}input,select,textarea{font:inherit;padding:.3rem;border:1px solid #5f6b76;border-radius:3px}
textarea{width:100%;min-height:3.5rem}button{font:inherit;padding:.35rem .8rem;border:1px solid #12355b;background:#12355b;color:#fff;border-radius:3px;cursor:pointer}
button.secondary{background:#fff;color:#12355b}.flash{padding:.6rem .8rem;border-radius:3px;margin:.6rem 0;border:1px solid}
.flash.ok{background:#e6f4ea;border-color:#1e7b34}.flash.error{background:#fdecea;border-color:#a61b1b}
.attention{background:#fff4e0}.badge{display:inline-block;padding:0 .4rem;border-radius:3px;background:#eef2f6;border:1px solid #8a96a3;font-size:13px}
.badge.warn{background:#fff4e0;border-color:#9a5b00}.note{background:#eef2f6;border-left:4px solid #12355b;padding:.5rem .8rem}
pre{white-space:pre-wrap;background:#f6f8fa;padding:.5rem;border:1px solid #d0d7de;font-size:13px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:#fff;color:#000;padding:.3rem}
button.danger{background:#a61b1b;border-color:#a61b1b}.req{font-weight:normal;color:#7f1d1d}
[aria-invalid="true"]{border:2px solid #a61b1b;background:#fff8f8}
.status{display:inline-block;padding:0 .45rem;border-radius:1rem;border:1px solid;font-size:13px;font-weight:600;white-space:nowrap}
.status.attention{background:#fff1d6;color:#6b3a00;border-color:#b35c00}.status.ok{background:#e3f4e8;color:#14532d;border-color:#1e7b34}
.status.bad{background:#fde8e8;color:#7f1d1d;border-color:#b42318}.status.open{background:#e6eefb;color:#0b3a75;border-color:#2f6fd1}
.status.neutral{background:#eef2f6;color:#1a1a1a;border-color:#6b7785}
section.line{border-left:4px solid #b8c0c8;padding-left:.8rem;margin:1.2rem 0}section.line.attention{border-left-color:#b35c00}
blockquote{margin:.3rem 0 .6rem;padding:.4rem .7rem;border-left:3px solid #6b7785;background:#f6f8fa;white-space:pre-wrap}
ol.evidence,ol.timeline{list-style:none;padding-left:0}ol.evidence>li,ol.timeline>li{margin:.5rem 0;padding:.3rem 0;border-bottom:1px solid #e3e7eb}
dl.detail{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .8rem;margin:.3rem 0}dl.detail dt{font-weight:600}dl.detail dd{margin:0}
.who-when{color:#3d4752}.evidence-pair{display:grid;grid-template-columns:minmax(0,40rem) minmax(0,1fr);gap:1rem;align-items:start}
.evidence-pair img{max-width:100%;height:auto;border:1px solid #b8c0c8}figure{margin:0}figcaption{font-size:13px;color:#3d4752}
@media (max-width:60rem){.evidence-pair{grid-template-columns:1fr}}ul.plain{list-style:none;padding:0;margin:0}form.filters fieldset{display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;align-items:end}form.filters legend{width:100%}
`;

/** The console page frame: skip link, navigation for what the viewer may use, and sign-out (a POST with the CSRF token). */
export function layout(title: string, body: string, viewer: Viewer | null, flash?: Flash | null): string {
  const nav = viewer
    ? [
        viewer.staff ? '<a href="/console/fulfilment">Fulfilment queue</a>' : '',
        viewer.reconciler ? '<a href="/console/operator">Operator</a>' : '',
        viewer.approver ? '<a href="/console/approvals">Agent approvals</a>' : '',
        viewer.staff ? '<a href="/console/queues">Queues</a>' : '',
        '<a href="/console/bookings">Campaigns</a>',
        '<a href="/console/billing">Billing</a>',
        '<a href="/console/rules">Rules</a>',
      ].join('')
    : '';
  const who = viewer
    ? `<span class="who"><span>${esc(viewer.userId)} · ${esc(viewer.workspace)}</span><a href="/console/preferences">Times in ${esc(viewer.timeZone)}</a>
<form method="post" action="/console/logout" class="inline">${csrfField(viewer)}<button type="submit" class="secondary">Sign out</button></form></span>`
    : '';
  const message = flash
    ? `<div id="flash" class="flash ${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${esc(flash.text)}</div>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · Flightdeck console</title><style>${STYLE}</style></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><strong><a href="/console">Flightdeck console</a></strong><nav aria-label="Console">${nav}</nav>${who}</header>
<main id="main"><h1>${esc(title)}</h1>${message}${body}</main></body></html>`;
}

export const csrfField = (viewer: Viewer) => `<input type="hidden" name="_csrf" value="${esc(viewer.csrf)}">`;

/** A POST form carrying the CSRF token and the fields the page showed (versions, digests). */
export function postForm(viewer: Viewer, action: string, hidden: Record<string, string | number>, inner: string, cls = ''): string {
  const fields = Object.entries(hidden)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');
  return `<form method="post" action="${esc(action)}"${cls ? ` class="${cls}"` : ''}>${csrfField(viewer)}${fields}${inner}</form>`;
}

export const money = (minor: unknown, currency = 'GBP') =>
  typeof minor === 'number' ? `${currency} ${(minor / 100).toFixed(2)}` : esc(minor ?? '—');

export const json = (v: unknown) => `<pre>${esc(JSON.stringify(v, null, 2))}</pre>`;
