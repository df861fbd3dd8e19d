/** A custom connection's test call: its test endpoint, called with its credentials, and what happened. */
import { ToolCallError } from '../server';
import { parseBody, TokenRefusedError, type CustomAuth, type CustomConnectionRef } from './auth';
import { underBase } from './credentials';
import { sendToCustomerApi } from './customer-api';

const TEST_TIMEOUT_MS = 15_000;
const TEST_BODY_CHARS = 4000;

export interface ConnectionTestResult {
  ok: boolean;
  status?: number;
  url: string;
  /** the provider's answer when the test failed */
  body?: unknown;
  error?: string;
}

/** Calls the connection's test endpoint with its credentials and says what happened. */
export async function testConnection(auth: CustomAuth, connection: CustomConnectionRef, allowPrivateNetwork: boolean): Promise<ConnectionTestResult> {
  const url = underBase(connection.credentials.baseUrl, connection.credentials.testPath);
  const shown = `${url.origin}${url.pathname}`;
  try {
    const response = await sendToCustomerApi(auth, connection, { method: 'GET', url, headers: { accept: 'application/json, */*;q=0.8' } }, {
      timeoutMs: TEST_TIMEOUT_MS, allowPrivateNetwork,
    });
    const ok = response.status >= 200 && response.status < 300;
    if (ok) return { ok, status: response.status, url: shown };
    const body = parseBody(response);
    return { ok, status: response.status, url: shown, body: typeof body === 'string' ? body.slice(0, TEST_BODY_CHARS) : body };
  } catch (error) {
    if (error instanceof TokenRefusedError) return { ok: false, status: error.status, url: shown, error: `the token endpoint refused: ${error.message}`, body: error.body };
    if (error instanceof ToolCallError) return { ok: false, url: shown, error: error.message };
    return { ok: false, url: shown, error: error instanceof Error ? error.message : String(error) };
  }
}
