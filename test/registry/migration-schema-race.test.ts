/**
 * Opening a PostgreSQL registry while another session drops schemas of the same database (a second
 * flowgate's test schemas, an operator's cleanup): the Migrator's setup lists every schema's tables
 * and names each through pg_get_serial_sequence(), which fails with "schema ... does not exist"
 * for one dropped meanwhile. The registry must open all the same (CI failed on exactly this).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { openRegistry } from '../../src/registry';
import { TEST_POSTGRES_URL } from '../support/registry-dialects';

const OPENS = 24;

function schemaName(prefix: string): string {
  return `${prefix}${Date.now()}_${randomBytes(4).toString('hex')}`;
}

describe('registry migration (PostgreSQL) while other schemas are dropped', () => {
  it(`opens ${OPENS} fresh registries while another session creates and drops schemas in a loop`, async () => {
    const churn = new Client({ connectionString: TEST_POSTGRES_URL });
    await churn.connect();
    const opened: string[] = [];
    let dropped = 0;
    let stop = false;
    const churning = (async () => {
      while (!stop) {
        const doomed = schemaName('flowgate_race_churn_');
        await churn.query(`create schema "${doomed}"`);
        // Several tables, each with columns, so the introspection query has rows of the schema to name.
        for (let table = 0; table < 4; table += 1) {
          await churn.query(`create table "${doomed}".t${table} (id serial primary key, a text, b integer, c text)`);
        }
        await churn.query(`drop schema "${doomed}" cascade`);
        dropped += 1;
      }
    })();
    try {
      for (let open = 0; open < OPENS; open += 1) {
        const schema = schemaName('flowgate_race_open_');
        opened.push(schema);
        const registry = await openRegistry({ kind: 'postgres', url: TEST_POSTGRES_URL, schema });
        try {
          const org = await registry.orgs.create(`race-${open}`);
          assert.equal((await registry.orgs.get(org.id))?.name, `race-${open}`);
        } finally {
          await registry.close();
        }
      }
    } finally {
      stop = true;
      await churning;
      for (const schema of opened) await churn.query(`drop schema if exists "${schema}" cascade`);
      await churn.end();
    }
    assert.ok(dropped > OPENS, `the other session dropped ${dropped} schemas meanwhile`);
  });
});
