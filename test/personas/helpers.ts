import { extractPersona } from '../../shared/personas/extractor';
import { SemanticCore } from '../../shared/personas/persona-schema';

/** The semantic core the extractor reads from a brief. */
export function core(brief: string): SemanticCore {
  return extractPersona(brief).semanticCore;
}

export function unresolved(brief: string): string[] {
  return core(brief).unresolvedConstraints ?? [];
}
