import { CHANNELS, type Channel } from '../auth/products';
import { adcpAdapterKey, adcpSellersAtStart, type AdcpSeller } from '../config/adcp-sellers';

/**
 * The suppliers Flightdeck can book through. Each key has its own queue
 * (`supplier.<key>`) and its own worker implementation in `workers/adapters/`.
 */
export type AdapterKind = 'sandbox' | 'workflow' | 'native-staged' | 'live' | 'adcp';
export type ExecutionMode = 'sandbox' | 'live';

export interface AdapterDescriptor {
  key: string;
  kind: AdapterKind;
  channels: readonly Channel[];
  /** Modes the adapter can execute in. */
  modes: readonly ExecutionMode[];
  /** Live execution needs an approved, stored supplier credential. */
  requiresCredential: boolean;
  /** Workflow adapters: how staff carry the booking out. */
  executionMethod: 'manual' | 'computer-use' | null;
  /** Hosts of the supplier's official public sources: the only places a browser job may observe. */
  officialSourceHosts: readonly string[];
  /** Whether the supplier can move a running line's end date (an amendment's `endDate`). */
  endDateChanges: boolean;
  /**
   * Whether the supplier holds a line to its daily cap itself (the cap is sent with the booking and
   * with the line's delivery calls): Flightdeck then never pauses the line at its cap. Where it
   * cannot, the engine enforces the cap (`delivery/cap-guard.ts`).
   */
  capsNatively: boolean;
  /** AdCP sellers: the seller's key in ADCP_SELLERS. */
  adcpSeller?: string;
}

/** The sandbox suppliers publish their (fictional) rate cards and specs here. */
const SANDBOX_SOURCES = ['sandbox-suppliers.flightdeck.dev'];
/**
 * The sandbox suppliers that hold a line to its daily cap themselves, as search and social
 * platforms do with daily budgets; the others cannot, so the engine enforces their caps and the
 * two paths can be compared.
 */
export const SANDBOX_NATIVE_CAP_CHANNELS: readonly Channel[] = ['search', 'social'];

const sandbox: AdapterDescriptor[] = CHANNELS.map((channel) => ({
  key: `sandbox-${channel}`,
  kind: 'sandbox',
  channels: [channel],
  modes: ['sandbox'],
  requiresCredential: false,
  executionMethod: null,
  officialSourceHosts: SANDBOX_SOURCES,
  endDateChanges: true,
  capsNatively: SANDBOX_NATIVE_CAP_CHANNELS.includes(channel),
}));

const live: AdapterDescriptor[] = CHANNELS.map((channel) => ({
  key: `live-${channel}`,
  kind: 'live',
  channels: [channel],
  modes: ['live'],
  requiresCredential: true,
  executionMethod: null,
  officialSourceHosts: [],
  endDateChanges: false,
  capsNatively: false,
}));

/**
 * An AdCP seller as an adapter. A sandbox seller takes sandbox bookings only and a live seller
 * live bookings only, so a sandbox booking can never reach a live seller. Live buying needs
 * approved supplier access naming the workspace's account on the seller; so does sandbox buying
 * (the seller must know whose sandbox account it is).
 */
export function adcpDescriptor(seller: AdcpSeller): AdapterDescriptor {
  return {
    key: adcpAdapterKey(seller.key),
    kind: 'adcp',
    channels: CHANNELS.filter((c) => seller.channels.includes(c)),
    modes: seller.sandbox ? ['sandbox'] : ['live'],
    requiresCredential: true,
    executionMethod: null,
    officialSourceHosts: [new URL(seller.agentUrl).hostname],
    endDateChanges: true,
    capsNatively: false,
    adcpSeller: seller.key,
  };
}

export const ADAPTERS: readonly AdapterDescriptor[] = [
  ...sandbox,
  {
    key: 'manual',
    kind: 'workflow',
    channels: CHANNELS,
    modes: ['sandbox', 'live'],
    requiresCredential: false,
    executionMethod: 'manual',
    officialSourceHosts: SANDBOX_SOURCES,
    endDateChanges: true,
    capsNatively: false,
  },
  {
    key: 'computer-use',
    kind: 'workflow',
    channels: CHANNELS,
    modes: ['sandbox', 'live'],
    requiresCredential: false,
    executionMethod: 'computer-use',
    officialSourceHosts: SANDBOX_SOURCES,
    endDateChanges: true,
    capsNatively: false,
  },
  {
    key: 'native-staged',
    kind: 'native-staged',
    channels: CHANNELS,
    modes: ['sandbox', 'live'],
    requiresCredential: false,
    executionMethod: null,
    officialSourceHosts: SANDBOX_SOURCES,
    endDateChanges: true,
    capsNatively: false,
  },
  ...live,
  ...adcpSellersAtStart().map(adcpDescriptor),
];

export function findAdapter(key: string): AdapterDescriptor | undefined {
  return ADAPTERS.find((a) => a.key === key);
}

/** Problems with the catalogue itself; readiness fails while there are any. */
export function catalogueProblems(adapters: readonly AdapterDescriptor[] = ADAPTERS): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const a of adapters) {
    if (!/^[a-z][a-z0-9-]*$/.test(a.key)) problems.push(`adapter key ${a.key} is not a valid queue suffix`);
    if (seen.has(a.key)) problems.push(`adapter key ${a.key} is registered twice`);
    seen.add(a.key);
    if (a.channels.length === 0) problems.push(`adapter ${a.key} serves no channel`);
    if (a.kind === 'adcp' && a.modes.length !== 1) problems.push(`adapter ${a.key} must be sandbox or live, not both`);
  }
  for (const channel of CHANNELS) {
    if (!adapters.some((a) => a.kind === 'sandbox' && a.channels.includes(channel))) {
      problems.push(`no sandbox adapter for channel ${channel}`);
    }
  }
  return problems;
}
