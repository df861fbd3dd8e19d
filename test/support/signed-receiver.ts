/**
 * A receiver of signed deliveries on loopback (completion callbacks, alert webhooks): verifies each
 * request's Standard Webhooks signature with the organization's secret (`standardwebhooks`),
 * keeps what it received, and answers the given statuses in turn (then 200; 401 when unverified).
 */
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { listenOnLoopback, type LoopbackServer } from './loopback';

export interface SignedDelivery { headers: http.IncomingHttpHeaders; body: string; answered: number; verified: boolean }

const header = (value: string | string[] | undefined): string => (Array.isArray(value) ? value.join(' ') : value ?? '');

export async function signedReceiver(secret: () => string, answers: number[] = [], onRequest?: (n: number) => void): Promise<LoopbackServer & { deliveries: SignedDelivery[] }> {
  const deliveries: SignedDelivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified: boolean;
      try {
        new Webhook(secret()).verify(body, {
          'webhook-id': header(req.headers['webhook-id']), 'webhook-timestamp': header(req.headers['webhook-timestamp']), 'webhook-signature': header(req.headers['webhook-signature']),
        });
        verified = true;
      } catch {
        verified = false;
      }
      const answered = verified ? answers[deliveries.length] ?? 200 : 401;
      deliveries.push({ headers: req.headers, body, answered, verified });
      onRequest?.(deliveries.length);
      res.statusCode = answered;
      res.end();
    });
  });
  return { ...(await listenOnLoopback(server)), deliveries };
}
