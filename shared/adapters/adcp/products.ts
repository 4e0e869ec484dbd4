import { z } from 'zod';
import type { SellerAccount } from '../credentials';
import type { AdcpSellerConnection } from './connection';
import { accountRef } from './account-ref';

/** A seller's product as a plan line may name it: the product, and the prices it may be bought at. */
export const SellerProductSchema = z
  .object({
    productId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    deliveryType: z.string().nullable(),
    /** The seller's own (AdCP) channels for the product. */
    channels: z.array(z.string()),
    pricingOptions: z.array(
      z.object({
        pricingOptionId: z.string(),
        pricingModel: z.string(),
        currency: z.string(),
        /** In the currency's major units, as the seller states them. */
        fixedPrice: z.number().nullable(),
        floorPrice: z.number().nullable(),
        minSpend: z.number().nullable(),
      }),
    ),
  })
  .meta({ id: 'SellerProduct' });
export type SellerProduct = z.infer<typeof SellerProductSchema>;

interface RawProduct {
  product_id: string;
  name?: string;
  description?: string;
  delivery_type?: string;
  channels?: string[];
  pricing_options?: Array<{
    pricing_option_id: string;
    pricing_model?: string;
    currency?: string;
    fixed_price?: number;
    floor_price?: number;
    min_spend?: number;
  }>;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function productOf(p: RawProduct): SellerProduct {
  return {
    productId: p.product_id,
    name: p.name ?? p.product_id,
    description: p.description ?? null,
    deliveryType: p.delivery_type ?? null,
    channels: p.channels ?? [],
    pricingOptions: (p.pricing_options ?? []).map((o) => ({
      pricingOptionId: o.pricing_option_id,
      pricingModel: o.pricing_model ?? 'unknown',
      currency: o.currency ?? 'unknown',
      fixedPrice: num(o.fixed_price),
      floorPrice: num(o.floor_price),
      minSpend: num(o.min_spend),
    })),
  };
}

/** What the seller could not do for a products request: unreachable, or an error of its own. */
export class ProductsUnavailable extends Error {
  override readonly name = 'ProductsUnavailable';
}

/**
 * The seller's products for a brief (AdCP get_products, buying_mode `brief`). The channel is given
 * to the seller in the brief: sellers name channels their own way (a ctv campaign may buy `olv`).
 */
export async function sellerProducts(
  connection: AdcpSellerConnection,
  input: { channel: string; brief: string; account: SellerAccount | null },
): Promise<SellerProduct[]> {
  const { mode } = connection;
  const request = {
    buying_mode: 'brief',
    brief: `${input.brief}\nChannel: ${input.channel}.`,
    ...(input.account ? { account: accountRef(input.account, mode), brand: { domain: input.account.brand.domain } } : {}),
  };
  let result;
  try {
    result = await connection.call((c) => c.getProducts(request as never));
  } catch (err) {
    throw new ProductsUnavailable(`${connection.adapterKey} did not answer: ${(err as Error).message}`, { cause: err });
  }
  if (result.status !== 'completed') {
    throw new ProductsUnavailable(`${connection.adapterKey} did not list products: ${result.error ?? result.status}`);
  }
  const products = ((result.data as { products?: RawProduct[] }).products ?? []).filter((p) => typeof p.product_id === 'string');
  return products.map(productOf);
}

/** Flightdeck budgets are pounds: a package's budget is sent in the pricing option's major units. */
export const BOOKING_CURRENCY = 'GBP';

/** The seller said, in its own words, that it will not list the product's prices (a refusal, not an outage). */
export class PriceNotListed extends Error {
  override readonly name = 'PriceNotListed';
}

/**
 * The currency of a product's pricing option as the seller lists it now; null when it lists no
 * such option. Asked in buying mode `wholesale` (the seller's whole catalogue for the account, no
 * brief); a seller that refuses that mode is asked to `refine` the one product (include it, with
 * its current pricing). A seller that refuses both is PriceNotListed; one that cannot be reached
 * or fails on its side throws what `connection.call` throws, or ProductsUnavailable.
 */
export async function pricingOptionCurrency(
  connection: AdcpSellerConnection,
  input: { accounts: readonly SellerAccount[]; mode: 'sandbox' | 'live'; productId: string; pricingOptionId: string },
  signal?: AbortSignal,
): Promise<{ currency: string | null; account: SellerAccount }> {
  const refusals: string[] = [];
  names: for (const account of input.accounts) {
    const scope = { account: accountRef(account, input.mode), brand: { domain: account.brand.domain } };
    const asks = [
      { buying_mode: 'wholesale', ...scope },
      { buying_mode: 'refine', refine: [{ scope: 'product', product_id: input.productId, action: 'include' }], ...scope },
    ];
    for (const request of asks) {
      const result = await connection.call((c) => c.getProducts(request as never), { signal });
      if (result.status === 'completed') {
        const product = ((result.data as { products?: RawProduct[] }).products ?? []).find((p) => p.product_id === input.productId);
        const option = product?.pricing_options?.find((o) => o.pricing_option_id === input.pricingOptionId);
        return { currency: option ? (option.currency ?? 'unknown') : null, account };
      }
      const error = result.adcpError;
      // Only the seller's own refusal of the way it was asked moves to the next way; anything else is not an answer.
      if (!error || error.recovery === 'transient')
        throw new ProductsUnavailable(`get_products answered ${result.status}: ${result.error ?? ''}`);
      refusals.push(`${request.buying_mode}: ${error.code}`);
      // The seller does not know the account so named: the next name, if any.
      if (error.code === 'ACCOUNT_NOT_FOUND') continue names;
    }
    // Both ways refused for what they ask, not for whose account: another name changes nothing.
    break;
  }
  throw new PriceNotListed(`The seller would not list the product's prices (${refusals.join('; ')})`);
}
