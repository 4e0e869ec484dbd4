import express, { type Express, type Request, type Response, type NextFunction } from 'express';
import { notFound } from '../../shared/errors';
import { SANDBOX_ACTIONS, SANDBOX_CHECKOUT_PATH, type SandboxAction, type SandboxProvider } from '../../shared/billing/sandbox-provider';

const SESSION = /^cs_test_[a-f0-9]{48}$/;
const LABELS: Record<SandboxAction, string> = {
  pay: 'Pay now',
  'pay-delayed': 'Pay by bank transfer (settles a moment later)',
  fail: 'Pay by bank transfer that fails',
  cancel: 'Cancel',
};

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const money = (minor: number) => `£${(minor / 100).toFixed(2)}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#111}
button{display:block;width:100%;margin:.5rem 0;padding:.75rem;font-size:1rem}</style></head><body>${body}</body></html>`;
}

/**
 * The sandbox payment provider's checkout page: a person pays or cancels, and the sandbox
 * sends the signed event a real provider would. Mounted only with BILLING_MODE=sandbox.
 */
export function mountSandboxCheckout(app: Express, sandbox: SandboxProvider): void {
  // Pages for people, not API operations: their own router, outside the OpenAPI document.
  const pages = express.Router({ strict: true, caseSensitive: true });
  const form = express.urlencoded({ extended: false, limit: '1kb' });
  const sessionOf = async (req: Request) => {
    const id = String(req.params.sessionId);
    const session = SESSION.test(id) ? await sandbox.session(id) : null;
    if (!session) throw notFound();
    return session;
  };
  pages.get(`${SANDBOX_CHECKOUT_PATH}/:sessionId`, async (req: Request, res: Response, next: NextFunction) => {
    try {
      const s = await sessionOf(req);
      const open = s.status === 'open';
      const buttons = SANDBOX_ACTIONS.map((a) => `<button name="action" value="${a}">${escape(LABELS[a])}</button>`).join('');
      res.type('html').send(
        page(
          'Sandbox checkout',
          `<h1>Sandbox checkout</h1><p>Top up the Flightdeck wallet by <strong>${money(s.amount_total ?? 0)}</strong>.
No real money moves: this is the sandbox payment provider.</p>
${open ? `<form method="post">${buttons}</form>` : `<p>This checkout is ${escape(String(s.status))} (${escape(String(s.payment_status))}).</p>`}`,
        ),
      );
    } catch (err) {
      next(err);
    }
  });
  pages.post(`${SANDBOX_CHECKOUT_PATH}/:sessionId`, form, async (req: Request, res: Response, next: NextFunction) => {
    try {
      const s = await sessionOf(req);
      const action = (req.body as Record<string, unknown> | undefined)?.action;
      if (!SANDBOX_ACTIONS.includes(action as SandboxAction)) throw notFound();
      await sandbox.act(s.id, action as SandboxAction);
      res.redirect(303, `${SANDBOX_CHECKOUT_PATH}/${s.id}`);
    } catch (err) {
      next(err);
    }
  });
  pages.get('/billing/topup/return', (_req, res) => {
    res
      .type('html')
      .send(page('Top-up', '<h1>Thank you</h1><p>Your wallet is credited as soon as the payment provider confirms the payment.</p>'));
  });
  app.use(pages);
}
