/** The shape of an industry table entry, and helpers the table's halves share. */
export interface IndustryEntry {
  label: string;
  terms: readonly string[];
  /** Organisation nouns; a tuple carries its own narrower codes ("banks" are 64.19, not all of finance). */
  orgs: readonly (string | readonly [string, readonly string[]])[];
  codes: readonly string[];
}

export const MANUFACTURING_DIVISIONS = [
  '10890',
  '11070',
  '12000',
  '13300',
  '14190',
  '15200',
  '16230',
  '17120',
  '18129',
  '19201',
  '20590',
  '21200',
  '22290',
  '23610',
  '24100',
  '25620',
  '26110',
  '27900',
  '28990',
  '29100',
  '30300',
  '31090',
  '32990',
  '33120',
];

export const o = (name: string, ...codes: string[]): readonly [string, readonly string[]] => [name, codes];
