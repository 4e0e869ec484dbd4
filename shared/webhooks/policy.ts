import type { Config } from '../config/config';
import type { UrlPolicy } from './url-safety';

/** Loopback receivers are allowed unless configured otherwise, except in production. */
export const webhookUrlPolicy = (config: Config): UrlPolicy => ({
  allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK ?? config.NODE_ENV !== 'production',
});
