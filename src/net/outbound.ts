/**
 * Former home of outbound HTTP, kept so that code written against it keeps compiling: the client
 * is src/net/http-client.ts and the address rules are src/net/address-policy.ts. New code imports
 * those directly.
 */
import { httpRequest, type BufferedResponse, type HttpRequestOptions } from './http-client';

export {
  type AddressPolicy, assertAddressAllowed, assertUrlAllowed, guardedLookup, isPrivateAddress, OutboundRefusedError,
} from './address-policy';
export { OutboundTimeoutError, ResponseTooLargeError, TooManyRedirectsError } from './http-client';

export type OutboundRequest = HttpRequestOptions & { maxResponseBytes: number };
export type OutboundResponse = BufferedResponse;

/** @deprecated use httpRequest from ./http-client */
export function outboundRequest(req: OutboundRequest): Promise<OutboundResponse> {
  return httpRequest(req);
}
