import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.1 document the check reads. */
interface HeaderDoc {
  required?: boolean;
  schema?: Record<string, unknown>;
}
interface ResponseDoc {
  headers?: Record<string, HeaderDoc>;
  content?: Record<string, { schema?: unknown }>;
}
interface OperationDoc {
  operationId?: string;
  responses: Record<string, ResponseDoc>;
}
export interface OpenApiDoc {
  paths: Record<string, Record<string, OperationDoc>>;
  components?: Record<string, unknown>;
}

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  op: OperationDoc;
}

const COMPONENTS_ID = 'https://flightdeck.test/openapi-components';

const mediaType = (contentType: string | null) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * Checks real responses against the OpenAPI document: the status is one the operation declares,
 * every required header is there with a value its schema allows, and the body has a declared
 * content type and matches its schema. Requests to paths the document does not describe (the
 * agent endpoint, OAuth, the queue dashboard) are not operations of the REST API and pass.
 */
export class ResponseChecker {
  private readonly operations: Operation[];
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(doc: OpenApiDoc) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    // Schemas refer to `#/components/...`; point those at one registered copy of the components.
    const components = JSON.parse(JSON.stringify(doc.components ?? {}).replaceAll('"#/components/', `"${COMPONENTS_ID}#/components/`));
    this.ajv.addSchema({ $id: COMPONENTS_ID, components });
    this.operations = Object.entries(doc.paths).flatMap(([template, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        method: method.toUpperCase(),
        template,
        // Path parameters match one segment; literal segments must match exactly.
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
        op,
      })),
    );
  }

  /** The documented operation a request reaches, if any. */
  operationFor(method: string, path: string): Operation | undefined {
    const pathname = path.split('?')[0]!;
    return this.operations.find((o) => o.method === method.toUpperCase() && o.pattern.test(pathname));
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let v = this.validators.get(key);
    if (!v) {
      const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${COMPONENTS_ID}#/components/`));
      v = this.ajv.compile(rewritten);
      this.validators.set(key, v);
    }
    return v;
  }

  /** Every way the response differs from the document; empty when it conforms. */
  async mismatches(method: string, path: string, res: Response): Promise<string[]> {
    const found = this.operationFor(method, path);
    if (!found) return [];
    const where = `${found.method} ${found.template}`;
    const doc = found.op.responses[String(res.status)] ?? found.op.responses.default;
    if (!doc) return [`${where} answered ${res.status}, which it does not document`];
    const problems: string[] = [];

    for (const [name, header] of Object.entries(doc.headers ?? {})) {
      const value = res.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`${where} ${res.status}: header ${name} is missing`);
        continue;
      }
      if (header.schema) {
        const typed = header.schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
        const v = this.validator(`${where} ${res.status} header ${name}`, header.schema);
        if (!v(typed)) problems.push(`${where} ${res.status}: header ${name}=${value} ${this.ajv.errorsText(v.errors)}`);
      }
    }

    if (method.toUpperCase() === 'HEAD') return problems;
    const text = await res.clone().text();
    const content = doc.content ?? {};
    const declared = Object.keys(content);
    if (declared.length === 0) {
      if (text.length > 0) problems.push(`${where} ${res.status}: a body was sent where none is documented`);
      return problems;
    }
    const type = mediaType(res.headers.get('content-type'));
    const match = declared.find((d) => d === type || d === '*/*');
    if (!match) {
      problems.push(`${where} ${res.status}: content-type ${type || '(none)'} is not one of ${declared.join(', ')}`);
      return problems;
    }
    const schema = content[match]!.schema;
    if (!schema || !/json$/.test(type)) return problems;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push(`${where} ${res.status}: the body is not JSON`);
      return problems;
    }
    const v = this.validator(`${where} ${res.status} ${match}`, schema);
    if (!v(body)) {
      const errors = (v.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
      problems.push(`${where} ${res.status}: body does not match the document: ${errors.join('; ')}`);
    }
    return problems;
  }

  /** Throws, naming every mismatch, when the response is not what the document says. */
  async check(method: string, path: string, res: Response): Promise<void> {
    const problems = await this.mismatches(method, path, res);
    if (problems.length) throw new Error(`The response disagrees with the OpenAPI document:\n  ${problems.join('\n  ')}`);
  }
}
