// Countries by ISO 3166-1 alpha-2 code. Row format:
//   CODE | names;aliases | demonym adjectives | plural demonym nouns | flags
// Flag "?" marks a name that is also an everyday word or a person's name
// (Turkey, Jordan, Chad...): it only counts with a place cue before it.

const ROWS = `
GB|United Kingdom;UK;U.K.;Great Britain;Britain;GB;England;Scotland;Wales;Northern Ireland;Blighty|British;English;Scottish;Welsh;Northern Irish|Brits;Britons;Scots;Welsh people|
IE|Ireland;Republic of Ireland;ROI;Eire;Irish Republic|Irish|Irish people|
US|United States;United States of America;USA;U.S.A.;U.S.;US;America;the States|American;US|Americans|
CA|Canada|Canadian|Canadians|
AU|Australia|Australian|Australians;Aussies|
NZ|New Zealand|New Zealand;Kiwi|New Zealanders|
FR|France|French|French people|
DE|Germany|German|Germans|
ES|Spain|Spanish|Spaniards|
PT|Portugal|Portuguese|Portuguese people|
IT|Italy|Italian|Italians|
NL|Netherlands;the Netherlands;Holland|Dutch|Dutch people|
BE|Belgium|Belgian|Belgians|
LU|Luxembourg|Luxembourgish|Luxembourgers|
CH|Switzerland|Swiss|Swiss people|
AT|Austria|Austrian|Austrians|
DK|Denmark|Danish|Danes|
SE|Sweden|Swedish|Swedes|
NO|Norway|Norwegian|Norwegians|
FI|Finland|Finnish|Finns|
IS|Iceland|Icelandic|Icelanders|?
PL|Poland|Polish|Poles|
CZ|Czech Republic;Czechia|Czech|Czechs|
SK|Slovakia|Slovak;Slovakian|Slovaks|
HU|Hungary|Hungarian|Hungarians|
RO|Romania|Romanian|Romanians|
BG|Bulgaria|Bulgarian|Bulgarians|
GR|Greece|Greek|Greeks|
CY|Cyprus|Cypriot|Cypriots|
MT|Malta|Maltese|Maltese people|
HR|Croatia|Croatian|Croatians;Croats|
SI|Slovenia|Slovenian|Slovenians|
RS|Serbia|Serbian|Serbians;Serbs|
BA|Bosnia and Herzegovina;Bosnia|Bosnian|Bosnians|
ME|Montenegro|Montenegrin|Montenegrins|
MK|North Macedonia|Macedonian|Macedonians|
AL|Albania|Albanian|Albanians|
EE|Estonia|Estonian|Estonians|
LV|Latvia|Latvian|Latvians|
LT|Lithuania|Lithuanian|Lithuanians|
UA|Ukraine|Ukrainian|Ukrainians|
MD|Moldova|Moldovan|Moldovans|
BY|Belarus|Belarusian|Belarusians|
RU|Russia;Russian Federation|Russian|Russians|
TR|Turkey;Turkiye;Türkiye|Turkish|Turks|?
GE|Georgia|Georgian|Georgians|?
AM|Armenia|Armenian|Armenians|
AZ|Azerbaijan|Azerbaijani|Azerbaijanis|
KZ|Kazakhstan|Kazakh|Kazakhs|
IL|Israel|Israeli|Israelis|
PS|Palestine|Palestinian|Palestinians|
JO|Jordan|Jordanian|Jordanians|?
LB|Lebanon|Lebanese|Lebanese people|
SA|Saudi Arabia;KSA|Saudi|Saudis|
AE|United Arab Emirates;UAE;the Emirates|Emirati|Emiratis|
QA|Qatar|Qatari|Qataris|
KW|Kuwait|Kuwaiti|Kuwaitis|
BH|Bahrain|Bahraini|Bahrainis|
OM|Oman|Omani|Omanis|
EG|Egypt|Egyptian|Egyptians|
MA|Morocco|Moroccan|Moroccans|
TN|Tunisia|Tunisian|Tunisians|
DZ|Algeria|Algerian|Algerians|
NG|Nigeria|Nigerian|Nigerians|
GH|Ghana|Ghanaian|Ghanaians|
KE|Kenya|Kenyan|Kenyans|
ET|Ethiopia|Ethiopian|Ethiopians|
TZ|Tanzania|Tanzanian|Tanzanians|
UG|Uganda|Ugandan|Ugandans|
RW|Rwanda|Rwandan|Rwandans|
ZA|South Africa|South African|South Africans|
ZW|Zimbabwe|Zimbabwean|Zimbabweans|
ZM|Zambia|Zambian|Zambians|
BW|Botswana|Botswanan|Batswana|
NA|Namibia|Namibian|Namibians|
SN|Senegal|Senegalese|Senegalese people|
CI|Ivory Coast;Cote d'Ivoire;Côte d'Ivoire|Ivorian|Ivorians|
CM|Cameroon|Cameroonian|Cameroonians|
MU|Mauritius|Mauritian|Mauritians|
IN|India|Indian|Indians|
PK|Pakistan|Pakistani|Pakistanis|
BD|Bangladesh|Bangladeshi|Bangladeshis|
LK|Sri Lanka|Sri Lankan|Sri Lankans|
NP|Nepal|Nepalese;Nepali|Nepalis|
CN|China;mainland China;PRC|Chinese|Chinese people|?
HK|Hong Kong|Hong Kong|Hongkongers|
TW|Taiwan|Taiwanese|Taiwanese people|
JP|Japan|Japanese|Japanese people|
KR|South Korea;Korea;Republic of Korea|South Korean;Korean|South Koreans;Koreans|
SG|Singapore|Singaporean|Singaporeans|
MY|Malaysia|Malaysian|Malaysians|
ID|Indonesia|Indonesian|Indonesians|
TH|Thailand|Thai|Thais|
VN|Vietnam;Viet Nam|Vietnamese|Vietnamese people|
PH|Philippines;the Philippines|Filipino;Philippine|Filipinos|
KH|Cambodia|Cambodian|Cambodians|
MM|Myanmar;Burma|Burmese|Burmese people|
MX|Mexico|Mexican|Mexicans|
BR|Brazil|Brazilian|Brazilians|
AR|Argentina|Argentine;Argentinian|Argentines;Argentinians|
CL|Chile|Chilean|Chileans|
CO|Colombia|Colombian|Colombians|
PE|Peru|Peruvian|Peruvians|
VE|Venezuela|Venezuelan|Venezuelans|
EC|Ecuador|Ecuadorian|Ecuadorians|
UY|Uruguay|Uruguayan|Uruguayans|
PY|Paraguay|Paraguayan|Paraguayans|
BO|Bolivia|Bolivian|Bolivians|
CR|Costa Rica|Costa Rican|Costa Ricans|
PA|Panama|Panamanian|Panamanians|?
CU|Cuba|Cuban|Cubans|?
DO|Dominican Republic|Dominican|Dominicans|
JM|Jamaica|Jamaican|Jamaicans|
TT|Trinidad and Tobago;Trinidad|Trinidadian|Trinidadians|
BB|Barbados|Barbadian;Bajan|Barbadians|
BS|Bahamas;the Bahamas|Bahamian|Bahamians|
PR|Puerto Rico|Puerto Rican|Puerto Ricans|
IM|Isle of Man|Manx|Manx people|
JE|Jersey|Jersey|Jersey people|?
GG|Guernsey|Guernsey|Guernsey people|?
GI|Gibraltar|Gibraltarian|Gibraltarians|
MC|Monaco|Monegasque|Monegasques|
AD|Andorra|Andorran|Andorrans|
LI|Liechtenstein|Liechtensteiner|Liechtensteiners|
SM|San Marino|Sammarinese|Sammarinese people|
`;

export interface CountryEntry {
  code: string;
  names: string[];
  adjectives: string[];
  plurals: string[];
  needsCue: boolean;
}

const split = (s: string | undefined): string[] =>
  s
    ? s
        .split(';')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];

export const COUNTRIES: readonly CountryEntry[] = ROWS.trim()
  .split('\n')
  .map((line) => {
    const [code, names, adjectives, plurals, flags] = line.split('|');
    return {
      code: code!.trim(),
      names: split(names),
      adjectives: split(adjectives),
      plurals: split(plurals),
      needsCue: (flags ?? '').includes('?'),
    };
  });

// Named groups of countries a brief may use instead of a list.
export const COUNTRY_GROUPS: Record<string, readonly string[]> = {
  dach: ['DE', 'AT', 'CH'],
  benelux: ['BE', 'NL', 'LU'],
  nordics: ['DK', 'FI', 'IS', 'NO', 'SE'],
  'nordic countries': ['DK', 'FI', 'IS', 'NO', 'SE'],
  scandinavia: ['DK', 'NO', 'SE'],
  baltics: ['EE', 'LV', 'LT'],
  'baltic states': ['EE', 'LV', 'LT'],
  iberia: ['ES', 'PT'],
  'north america': ['US', 'CA'],
  anz: ['AU', 'NZ'],
  australasia: ['AU', 'NZ'],
  gcc: ['AE', 'BH', 'KW', 'OM', 'QA', 'SA'],
  'gulf states': ['AE', 'BH', 'KW', 'OM', 'QA', 'SA'],
  'british isles': ['GB', 'IE'],
  'uk and ireland': ['GB', 'IE'],
  eu: [
    'AT',
    'BE',
    'BG',
    'HR',
    'CY',
    'CZ',
    'DK',
    'EE',
    'FI',
    'FR',
    'DE',
    'GR',
    'HU',
    'IE',
    'IT',
    'LV',
    'LT',
    'LU',
    'MT',
    'NL',
    'PL',
    'PT',
    'RO',
    'SK',
    'SI',
    'ES',
    'SE',
  ],
  'european union': [
    'AT',
    'BE',
    'BG',
    'HR',
    'CY',
    'CZ',
    'DK',
    'EE',
    'FI',
    'FR',
    'DE',
    'GR',
    'HU',
    'IE',
    'IT',
    'LV',
    'LT',
    'LU',
    'MT',
    'NL',
    'PL',
    'PT',
    'RO',
    'SK',
    'SI',
    'ES',
    'SE',
  ],
};

// Areas too broad to turn into a country list without guessing which
// countries the advertiser means; they are reported, not expanded.
export const UNLISTABLE_AREAS = [
  'europe',
  'emea',
  'apac',
  'asia',
  'africa',
  'latam',
  'latin america',
  'south america',
  'middle east',
  'worldwide',
  'globally',
  'global audience',
  'internationally',
  'all markets',
] as const;
