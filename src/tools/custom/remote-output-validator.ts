/**
 * How the MCP SDK's client checks a remote server's structured results against the output schemas
 * that server declares (it compiles them as it lists the tools: a chain of 300 `$ref`s overflowed
 * ajv's compiler there). The schemas come from across the internet, so they are held to what
 * flowgate's own schemas are: patterns on RE2 (a pattern V8 would compile recursively can abort
 * the process, src/documents/linear-regexp.ts) and no deeper than ajv's compiler safely follows
 * (src/documents/resolved-shape.ts). A schema beyond that, or a pattern RE2 cannot run, checks nothing:
 * flowgate passes the remote's answer on as it came, as it would for a tool without a schema.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { jsonSchemaValidator, JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { lenientLinearRegExp } from '../../documents/linear-regexp';
import { MAX_COMPILED_SCHEMA_DEPTH, schemaDepthExceeds } from '../../documents/resolved-shape';

/** One per client (the SDK's default is one ajv per client too, so compiled schemas go with it). */
export function remoteOutputValidator(): jsonSchemaValidator {
  // the SDK's own settings, plus the RE2 patterns
  const ajv = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true, code: { regExp: lenientLinearRegExp } });
  addFormats(ajv);
  const checked = new AjvJsonSchemaValidator(ajv);
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      if (schemaDepthExceeds(schema, MAX_COMPILED_SCHEMA_DEPTH)) return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
      return checked.getValidator<T>(schema);
    },
  };
}
