import { z } from 'zod';
import { WordList, parseLexicon } from './load';
import raw from './words.json';

// Small word lists the extractor reads in several places (words.json).
const Words = z.object({
  about: z.string(),
  ambiguousInterests: WordList,
  emptyWords: WordList,
  nothingNamed: WordList,
  channelWords: WordList,
  chainAdverbs: WordList,
  placingVerbs: WordList,
  personWords: WordList,
  proseWords: WordList,
  clubWords: WordList,
});
export const WORDS = parseLexicon('words.json', Words, raw);
