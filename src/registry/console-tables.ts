/**
 * The tables of the console and of hosted forms (issue 33; migration 0013), apart from db.ts so
 * that it stays one screenful per concern. Conventions as in db.ts.
 */

/** A console sign-in (src/console/sessions.ts): the session ID is stored hashed, never in clear. */
export interface ConsoleSessionsTable {
  /** SHA-256 of the session cookie's value */
  id_hash: string;
  org_id: string;
  /** the admin token the session signed in with: a rotated (deleted) token ends its sessions */
  token_hash: string;
  /** the synchronizer token every state-changing request must carry */
  csrf_token: string;
  /** the member a sign-in through the organization's identity provider opened it for (migration 0015); null: an admin token's session */
  member_id: string | null;
  created_at: string;
  expires_at: string;
}

/** A trigger's hosted form (src/console/forms.ts): the URL's secret is stored hashed. */
export interface TriggerFormsTable {
  id: string;
  org_id: string;
  trigger_id: string;
  token_hash: string;
  /** 0/1: the form waits for the run's result (the sync window) and shows it */
  wait: number;
  created_at: string;
  revoked_at: string | null;
}
