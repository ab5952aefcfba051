import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';

type Operation = { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: object }> }> };

/**
 * Checks REST responses against the served OpenAPI document: the status must be documented for
 * the operation, the body must match its schema, and every documented header must be present.
 */
export class OpenApiContract {
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly ajv = new Ajv({ allErrors: true });
  checked = 0;

  private constructor(private readonly doc: { paths: Record<string, Record<string, Operation>> }) {
    addFormats(this.ajv);
    this.ajv.addVocabulary(['example']);
  }

  static async from(document: object): Promise<OpenApiContract> {
    await SwaggerParser.validate(structuredClone(document) as never);
    return new OpenApiContract((await SwaggerParser.dereference(structuredClone(document) as never)) as never);
  }

  expectDocumented(response: Response, method: string, pathTemplate: string): void {
    const operation = this.doc.paths[pathTemplate]?.[method.toLowerCase()];
    if (!operation) throw new Error(`${method} ${pathTemplate} is not in the OpenAPI document`);
    const documented = operation.responses[String(response.status)];
    if (!documented) throw new Error(`${method} ${pathTemplate} answered ${response.status}, which the document does not list`);
    const key = `${method} ${pathTemplate} ${response.status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(documented.content?.['application/json']?.schema ?? {});
      this.validators.set(key, validate);
    }
    if (!validate(response.body)) {
      throw new Error(`${key}: body does not match the document: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(response.body)}`);
    }
    const missing = Object.keys(documented.headers ?? {}).filter((name) => response.headers[name.toLowerCase()] === undefined);
    if (missing.length) throw new Error(`${key}: documented headers missing: ${missing.join(', ')}`);
    this.checked += 1;
  }
}
