import { core } from './helpers';

const firmo = (brief: string) => core(brief).firmographics;
const divisions = (brief: string): string[] => [...new Set(firmo(brief).sicCodes.map((c) => c.slice(0, 2)))].sort();

describe('seniority', () => {
  it.each([
    ['CFOs and finance directors at manufacturers.', ['c-suite', 'director']],
    ['Chief information security officers at banks.', ['c-suite']],
    ['Founders of startups.', ['c-suite']],
    ['Small business owners in Leeds.', ['c-suite']],
    ['Partners at law firms.', ['c-suite']],
    ['Managing directors at accountancy firms.', ['c-suite']],
    ['VPs of engineering at SaaS companies.', ['vp']],
    ['Vice presidents of sales.', ['vp']],
    ['Heads of marketing at SMEs.', ['director']],
    ['IT directors at FTSE 250 companies.', ['director']],
    ['Procurement managers at logistics firms.', ['manager']],
    ['Data analysts and data engineers at banks.', ['ic']],
    ['Senior software engineers at scale-ups.', ['ic']],
    ['Engineering managers and VPs of engineering.', ['vp', 'manager']],
  ])('"%s" gives seniority %j', (brief, levels) => {
    expect([...firmo(brief).seniority].sort()).toEqual([...levels].sort());
  });

  it('owners of pets or homes are not business owners', () => {
    expect(firmo('Pet owners and homeowners in Leeds.').seniority).toEqual([]);
  });

  it('a consumer brief has no seniority', () => {
    expect(firmo('Women aged 25-34 who love yoga.').seniority).toEqual([]);
  });
});

describe('company size', () => {
  it.each([
    ['Small business owners.', 'smb'],
    ['Marketing leads at SMEs.', 'smb'],
    ['Founders of startups.', 'smb'],
    ['CFOs at mid-market manufacturers.', 'mid'],
    ['HR directors at mid-sized insurers.', 'mid'],
    ['CIOs at enterprise software companies.', 'enterprise'],
    ['Finance directors at large corporates.', 'enterprise'],
    ['IT directors at FTSE 100 companies.', 'enterprise'],
    ['Companies with under 50 employees.', 'smb'],
    ['Retailers with 50-250 employees.', 'mid'],
    ['Manufacturers with 250+ employees.', 'enterprise'],
    ['Gamers in Leeds.', 'any'],
  ])('"%s" gives company size %s', (brief, size) => {
    expect(firmo(brief).companySize).toBe(size);
  });

  it('two sizes cannot both hold: reported, left at "any"', () => {
    const c = core('Heads of procurement at FTSE 100 and mid-market retailers.');
    expect(c.firmographics.companySize).toBe('any');
    expect(c.unresolvedConstraints?.join(' ')).toMatch(/size/);
  });

  it('an employee range that straddles two bands is reported, not guessed', () => {
    const c = core('Firms with 100-500 employees.');
    expect(c.firmographics.companySize).toBe('any');
    expect(c.unresolvedConstraints).toHaveLength(1);
  });
});

describe('industries as UK SIC 2007 codes', () => {
  it('codes are 5-digit strings', () => {
    for (const code of firmo('CFOs at manufacturing, software and retail companies.').sicCodes) expect(code).toMatch(/^\d{5}$/);
  });

  it.each([
    ['CFOs at mid-market manufacturing companies.', Array.from({ length: 24 }, (_, i) => String(10 + i))],
    ['VPs at enterprise software companies.', ['58', '62']],
    ['Store managers at supermarkets.', ['47']],
    ['Directors at construction firms.', ['41', '42', '43']],
    ['Analysts at banks and insurers.', ['64', '65']],
    ['Managers at insurance companies.', ['65', '66']],
    ['IT directors at hospitals and GP practices.', ['86']],
    // The trades are specialised construction (43), not civil engineering (42).
    ['Owners of small firms in the trades.', ['43']],
    // Warehousing (52) and couriers (53) are different divisions.
    ['Shift managers in warehouses and distribution centres.', ['52']],
    ['Nurses, midwives and junior doctors.', ['86']],
    ['Heads of IT at universities and schools.', ['85']],
    ['Marketing managers in the hospitality sector.', ['55', '56']],
    ['Operations directors at logistics companies.', ['49', '52', '53']],
    ['Partners at law firms.', ['69']],
    ['Managers at accounting firms.', ['69']],
    ['Directors at estate agents.', ['68']],
    ['Heads of network at telecoms companies.', ['61']],
    ['Engineers at energy companies.', ['35']],
    ['Farmers in Norfolk.', ['01']],
    ['Marketing directors at automotive companies.', ['29', '45']],
    ['Scientists at pharma companies.', ['21']],
    ['Editors at media companies.', ['58', '59', '60']],
    ['Engineers at aerospace companies.', ['30']],
  ])('"%s" maps into SIC divisions %j', (brief, allowed) => {
    const got = divisions(brief);
    expect(got.length).toBeGreaterThan(0);
    for (const d of got) expect(allowed).toContain(d);
  });

  it('a job function is not an industry ("finance directors", "heads of marketing")', () => {
    expect(firmo('Finance directors and heads of marketing.').sicCodes).toEqual([]);
  });

  it('an industry word inside an intent is not the audience\'s industry ("looking for accounting software")', () => {
    expect(firmo('Small business owners looking for accounting software.').sicCodes).toEqual([]);
  });

  it('an organisation noun in a consumer audience is not an industry ("university students", "hotel guests")', () => {
    expect(firmo('University students in Manchester.').sicCodes).toEqual([]);
    expect(firmo('Hotel guests in Edinburgh.').sicCodes).toEqual([]);
    expect(firmo('Mums who shop at discount supermarkets.').sicCodes).toEqual([]);
  });

  it('industries are as narrow as the brief: a sector word narrows the organisation noun after it', () => {
    expect(divisions('Finance directors at food and drink manufacturers in the Midlands.')).toEqual(['10', '11']);
    expect(divisions('Buyers at mid-sized food and drink manufacturers.')).toEqual(['10', '11']);
    expect(divisions('Plant managers at manufacturers in Leeds.').length).toBe(24);
    expect(firmo('Directors at food and drink manufacturers.').industries).toEqual(['food and drink manufacturing']);
  });

  it('a sector before an organisation noun is an industry, not an interest', () => {
    expect(core('Finance directors at food and drink manufacturers in Leeds.').interests).toEqual([]);
  });
});
