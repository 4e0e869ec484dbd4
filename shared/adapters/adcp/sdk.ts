/**
 * The AdCP SDK holds about 50 MB of a process's memory once loaded (its schemas and its signing
 * stack). It is loaded when a seller is first talked to or heard from, so a deployment with no
 * AdCP seller never pays for it.
 */
let client: Promise<typeof import('@adcp/sdk')> | undefined;
let signing: Promise<typeof import('@adcp/sdk/signing/server')> | undefined;

/** The SDK's client side (AgentClient, TaskExecutor). */
export const adcpSdk = () => (client ??= import('@adcp/sdk'));

/** The SDK's webhook verifier (RFC 9421). */
export const adcpSigning = () => (signing ??= import('@adcp/sdk/signing/server'));
