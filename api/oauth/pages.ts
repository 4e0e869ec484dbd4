import { PRODUCTS } from '../../shared/auth/products';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(title)} · Flightdeck (development)</title>
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.75rem 0}
input,select{display:block;width:100%;padding:.4rem;margin-top:.25rem}button{padding:.5rem 1rem;margin:1rem .5rem 0 0}
.note{color:#a33}</style></head>
<body><main><h1>${escape(title)}</h1>${body}</main></body></html>`;
}

/** The development sign-in: no password, not for production. */
export function loginPage(uid: string, clientId: string, error?: string): string {
  const products = PRODUCTS.map((p) => `<option value="${p}">${p}</option>`).join('');
  return page(
    'Sign in',
    `<p class="note">Development sign-in: anyone may sign in as anyone. Never use it in production.</p>
<p><strong>${escape(clientId)}</strong> wants to connect to Flightdeck.</p>
${error ? `<p class="note" role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/oauth/interaction/${escape(uid)}/login">
<label>User id<input name="user" required maxlength="200" autocomplete="username"></label>
<label>Workspace (advertiser organisation id)<input name="workspace" required maxlength="200"></label>
<label>Product<select name="product">${products}</select></label>
<label>Channels (optional, comma-separated, narrows the product)<input name="channels" maxlength="100"></label>
<label>Permissions (optional, comma-separated, e.g. operator:reconcile, agent:approve, plan:approve, campaign:launch; the console's tokens only)<input name="permissions" maxlength="300"></label>
<button type="submit">Sign in</button>
</form>`,
  );
}

/** Exactly what a grant to the agent endpoint allows, as the consent lists it (made by api/mcp). */
export interface GrantAllows {
  reads: Array<{ tool: string; summary: string }>;
  changes: Array<{ tool: string; summary: string }>;
  /** The governed actions it may prepare; each runs only after a person approves its exact digest. */
  governedActions: string[];
}

const toolList = (tools: GrantAllows['reads']) =>
  `<ul>${tools.map((t) => `<li><code>${escape(t.tool)}</code>: ${escape(t.summary)}</li>`).join('')}</ul>`;

/**
 * The workspace-bound consent: who, which workspace, which client (for a client nobody
 * registered, the host its metadata document is served from, since anyone can choose a name),
 * and exactly what it will and will not be able to do.
 */
export function consentPage(
  uid: string,
  c: {
    clientId: string;
    clientName: string;
    /** The host of a client identified by its metadata document's URL; absent for a registered client. */
    clientHost?: string;
    user: string;
    workspace: string;
    product: string;
    channels: string[];
    scope: string;
    allows: GrantAllows;
  },
): string {
  const who = c.clientHost
    ? `<strong data-client>${escape(c.clientName)}</strong> from <strong data-client-host>${escape(c.clientHost)}</strong>
(not registered here: it is identified by <code>${escape(c.clientId)}</code>; connect it only if you trust that site)`
    : `<strong data-client>${escape(c.clientName)}</strong> (<code>${escape(c.clientId)}</code>)`;
  return page(
    'Connect an assistant',
    `<p>Allow ${who}
to act for <strong data-user>${escape(c.user)}</strong> in the workspace <strong data-workspace>${escape(c.workspace)}</strong>?</p>
<ul>
<li>Product <code>${escape(c.product)}</code>, channels ${c.channels.map((ch) => `<code>${escape(ch)}</code>`).join(', ')}.</li>
<li>The grant is for this workspace only (scope <code>${escape(c.scope)}</code>).</li>
</ul>
<section data-allows><h2>What it may do</h2>
<h3>Read</h3>${toolList(c.allows.reads)}
<h3>Change, prepare or execute</h3>${toolList(c.allows.changes)}
<h3>Actions it may prepare</h3>
<p>Each runs only after a person with <code>agent:approve</code> approves its exact digest, and only within the mandate the workspace gave this assistant:
${c.allows.governedActions.map((a) => `<code data-action>${escape(a)}</code>`).join(', ')}.</p>
<h3>Never</h3>
<p>It can never approve or abandon an action: approvals stay with people. It carries none of your permissions.</p>
</section>
<form method="post" action="/oauth/interaction/${escape(uid)}/confirm"><button type="submit" name="decision" value="allow">Allow</button></form>
<form method="post" action="/oauth/interaction/${escape(uid)}/abort"><button type="submit" name="decision" value="deny">Deny</button></form>`,
  );
}

/** An authorization error shown to the user (never redirected: the redirect URL may be the problem). */
export function errorPage(error: string, description?: string): string {
  return page('The connection was refused', `<p><code>${escape(error)}</code></p>${description ? `<p>${escape(description)}</p>` : ''}`);
}
