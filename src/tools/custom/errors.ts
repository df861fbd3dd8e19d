/**
 * What an outbound failure means to a tool caller: a refused destination or a customer API that
 * cannot be reached is a call that could not be made (UNAVAILABLE, -32000), never a hang and
 * never an internal error.
 */
import { OutboundRefusedError } from '../../net/address-policy';
import { OutboundTimeoutError, ResponseTooLargeError, TooManyRedirectsError } from '../../net/http-client';
import { ToolCallError, ToolFailure } from '../server';
import { TokenRefusedError } from './auth';

export function outboundFailure(error: unknown, what: string): Error {
  if (error instanceof ToolCallError || error instanceof ToolFailure) return error;
  if (error instanceof TokenRefusedError) return new ToolFailure(`the token endpoint refused: ${error.message}`, { status: error.status });
  if (error instanceof OutboundRefusedError) return new ToolCallError('UNAVAILABLE', `${what}: ${error.message} (set FLOWGATE_ALLOW_PRIVATE_NETWORK to allow it)`);
  if (error instanceof OutboundTimeoutError) return new ToolCallError('TIMEOUT', `${what}: ${error.message}`);
  if (error instanceof ResponseTooLargeError || error instanceof TooManyRedirectsError) return new ToolFailure(`${what}: ${error.message}`);
  const reason = error instanceof Error ? (hasCode(error) ? `${error.code} ${error.message}` : error.message) : String(error);
  return new ToolCallError('UNAVAILABLE', `${what}: unreachable (${reason})`);
}

function hasCode(error: Error): error is Error & { code: string } {
  return 'code' in error && typeof error.code === 'string' && !error.message.includes(error.code);
}
