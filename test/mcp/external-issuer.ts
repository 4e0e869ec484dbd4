import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, decodeJwt } from 'jose';
import { newSigningKey, type SigningKey, type TestIssuer } from '../support/issuer';

/**
 * A production authorization server for /mcp (MCP_ISSUER), as someone else runs it: RFC 8414
 * metadata, a JWKS that can fail like an identity provider in an outage, and the RFC 8693
 * exchange, answered with an API token from the identity provider the API trusts.
 */
export class ExternalIssuer {
  url = '';
  key!: SigningKey;
  /** The status the JWKS answers with while failing (an outage behind a load balancer is a 5xx). */
  jwksFailing: number | null = null;
  jwksFetches = 0;
  private server?: http.Server;

  constructor(private readonly apiIssuer: TestIssuer) {}

  static async start(apiIssuer: TestIssuer): Promise<ExternalIssuer> {
    const issuer = new ExternalIssuer(apiIssuer);
    issuer.key = await newSigningKey();
    issuer.server = http.createServer((req, res) => void issuer.answer(req, res));
    await new Promise<void>((r) => issuer.server!.listen(0, '127.0.0.1', r));
    issuer.url = `http://127.0.0.1:${(issuer.server.address() as AddressInfo).port}`;
    return issuer;
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse) {
    const send = (status: number, body?: unknown) => {
      res.statusCode = status;
      if (body !== undefined) res.setHeader('content-type', 'application/json');
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const path = (req.url ?? '').split('?')[0];
    if (path === '/.well-known/oauth-authorization-server') {
      return send(200, {
        issuer: this.url,
        authorization_endpoint: `${this.url}/authorize`,
        token_endpoint: `${this.url}/token`,
        jwks_uri: `${this.url}/jwks`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (path === '/jwks') {
      this.jwksFetches++;
      if (this.jwksFailing) return send(this.jwksFailing);
      return send(200, { keys: [this.key.publicJwk] });
    }
    if (path === '/token' && req.method === 'POST') {
      let raw = '';
      for await (const chunk of req) raw += String(chunk);
      const grant = decodeJwt(new URLSearchParams(raw).get('subject_token') ?? '');
      const accessToken = await this.apiIssuer.token({
        org: String(grant.org_id),
        user: String(grant.sub),
        agent: String(grant.client_id),
        expiresIn: '5m',
      });
      return send(200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300 });
    }
    send(404);
  }

  /** A grant for `audience`, signed with this issuer's published key (or another key, to test refusals). */
  grant(audience: string, claims: Record<string, unknown> = {}, key: SigningKey = this.key) {
    return new SignJWT({ org_id: 'acme', client_id: 'flightdeck-assistant', scope: 'flightdeck', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
      .setIssuer(this.url)
      .setAudience(audience)
      .setSubject('alice')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(key.privateKey);
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}
