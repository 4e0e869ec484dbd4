import { esc } from './html';
import { labelOf } from './words';

/**
 * What a person typed into a form the service refused (or has yet to confirm), kept in their
 * session for the next page: the form is shown again with it, its faulty fields marked.
 */
export interface Draft {
  /** The form's action: only that form is filled from it. */
  action: string;
  fields: Record<string, string>;
  /** Fields the refusal named. */
  invalid: string[];
}

/** Fields never kept: the session's own token, and what the page sets rather than the person. */
const NOT_KEPT = new Set(['_csrf']);
const MAX_KEPT = 20_000;

export function draftOf(action: string, body: unknown, invalid: string[] = []): Draft {
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    if (!NOT_KEPT.has(k) && typeof v === 'string') fields[k] = v.slice(0, MAX_KEPT);
  }
  return { action, fields, invalid };
}

export interface FieldSpec {
  id: string;
  name: string;
  /** The label's words; the field's own label (`words.ts`) unless given. */
  label?: string;
  required?: boolean;
  attrs?: string;
  /** What the field holds when no draft fills it. */
  initial?: string;
}

/** Fills one form's fields from the draft of that form, if there is one. */
export class FormFill {
  constructor(
    private readonly draft: Draft | null,
    readonly action: string,
  ) {}

  private mine = () => (this.draft && this.draft.action === this.action ? this.draft : null);
  valueOf = (name: string) => this.mine()?.fields[name];
  private invalid = (name: string) => Boolean(this.mine()?.invalid.includes(name));

  label(f: FieldSpec): string {
    const mark = f.required ? ' <span class="req">(required)</span>' : '';
    return `<label for="${esc(f.id)}">${esc(f.label ?? labelOf(f.name))}${mark}</label>`;
  }

  /** The attributes every field carries: name, required, and, when the refusal named it, marked invalid and described by the message. */
  private common(f: FieldSpec): string {
    return (
      `id="${esc(f.id)}" name="${esc(f.name)}"${f.required ? ' required' : ''}${f.attrs ? ` ${f.attrs}` : ''}` +
      (this.invalid(f.name) ? ' aria-invalid="true" aria-describedby="flash"' : '')
    );
  }

  textarea(f: FieldSpec): string {
    return `${this.label(f)}<textarea ${this.common(f)}>${esc(this.valueOf(f.name) ?? f.initial ?? '')}</textarea>`;
  }

  input(f: FieldSpec & { type?: string }): string {
    const value = this.valueOf(f.name) ?? f.initial;
    return `${this.label(f)}<input ${this.common(f)}${f.type ? ` type="${esc(f.type)}"` : ''}${value !== undefined ? ` value="${esc(value)}"` : ''}>`;
  }

  select(f: FieldSpec & { options: Array<[value: string, words: string]> }): string {
    const chosen = this.valueOf(f.name) ?? f.initial;
    const options = f.options.map(([v, w]) => `<option value="${esc(v)}"${chosen === v ? ' selected' : ''}>${esc(w)}</option>`).join('');
    return `${this.label(f)}<select ${this.common(f)}>${options}</select>`;
  }

  checkbox(f: FieldSpec & { value: string }): string {
    const checked = this.valueOf(f.name) === f.value ? ' checked' : '';
    const mark = f.required ? ' <span class="req">(required)</span>' : '';
    return `<label><input type="checkbox" ${this.common(f)} value="${esc(f.value)}"${checked}> ${esc(f.label ?? labelOf(f.name))}${mark}</label>`;
  }
}
