/** The few parts of oidc-provider (panva, OpenID Certified; no published types) the tests use. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; prompt: { name: string }; params: Record<string, unknown>; session?: { accountId?: string } }>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
    Grant: new (properties: { accountId: string; clientId: string }) => Grant;
    proxy: boolean;
  }
}
