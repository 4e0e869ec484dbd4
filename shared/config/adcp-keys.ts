/** An AdCP seller's adapter key: `adcp-<seller key>`. */
export const adcpAdapterKey = (sellerKey: string) => `adcp-${sellerKey}`;

/** The configured seller behind an adapter key, if it is an AdCP seller's. */
export const sellerOfAdapter = <S extends { key: string }>(sellers: readonly S[], adapterKey: string): S | undefined =>
  sellers.find((s) => adcpAdapterKey(s.key) === adapterKey);
