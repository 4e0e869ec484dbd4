import { z } from 'zod';

export const CHANNELS = ['ctv', 'audio', 'tv', 'cinema', 'dooh', 'search', 'social'] as const;
export const ChannelSchema = z.enum(CHANNELS);
export type Channel = z.infer<typeof ChannelSchema>;

export const PRODUCTS = ['flightdeck', 'flightdeck-dooh', 'flightdeck-ctv'] as const;
export const ProductSchema = z.enum(PRODUCTS);
export type Product = z.infer<typeof ProductSchema>;

const PRODUCT_CHANNELS: Record<Product, readonly Channel[]> = {
  flightdeck: CHANNELS,
  'flightdeck-dooh': ['dooh'],
  'flightdeck-ctv': ['ctv'],
};

/** A caller's product and the channels it may use: never none, never more than the seven. */
export const ProductScopeSchema = z
  .object({ product: ProductSchema, channels: z.array(ChannelSchema).min(1).max(CHANNELS.length) })
  .meta({ id: 'ProductScope' });
export type ProductScope = z.infer<typeof ProductScopeSchema>;

/** The channels a caller may use: the product's, narrowed by a signed entitlement if the token carries one. */
export function entitledChannels(product: Product, entitlement?: readonly Channel[]): Channel[] {
  const base = PRODUCT_CHANNELS[product];
  if (!entitlement) return [...base];
  return base.filter((c) => entitlement.includes(c));
}
