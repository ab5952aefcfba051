import { Client } from 'pg';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { printFigure } from '../helpers/figures';
import { gql } from '../helpers/gql';
import type { TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';
import { metric } from '../helpers/metrics';
import { replicaAt, type Replication, startReplication, withReplication } from '../helpers/replication';

/** The replica's state as each instance's /readyz shows it. */
const statesOn = async (instances: TestApp[]) =>
  Promise.all(
    instances.map(async (instance) => {
      const { replicas } = (await (await fetch(`${instance.url}/readyz`)).json()) as { replicas: { state: string }[] };
      return replicas[0].state;
    }),
  );

/** Sets a pet's name straight on `url`'s server, as an operator's psql would. */
async function renameOn(url: string, petId: string, name: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('UPDATE pets SET name = $1 WHERE id = $2', [name, petId]);
  } finally {
    await client.end();
  }
}

/** A deployment whose replica leaves the primary's history: every read, every caller's, sees the primary's writes. */
function failoverCases(what: string, cascade: boolean, leave: (r: Replication, petId: string) => Promise<void>) {
  withReplication(what, () => {
    let r: Replication;
    let petId: string;
    let admin: string;

    beforeAll(async () => {
      r = await startReplication({}, { cascade });
      const [a] = r.instances;
      petId = await createPet(a, await createCategory(a, 'Dogs'), 'Rex');
      admin = (await createApiKey(a, { name: 'admin', role: 'ADMIN', plan: 'ENTERPRISE', requestsPerMinute: 100_000, requestsPerDay: 1_000_000 })).key;
      await Promise.all(r.instances.map((instance) => replicaAt(instance)));
    }, 180_000);

    afterAll(async () => {
      await r?.close();
    });

    it('takes no reads once it has left, shown detached on /readyz and /metrics', async () => {
      const [a, b] = r.instances;
      await leave(r, petId);
      const written = await gql(a.url, 'mutation($id: ID!) { updatePet(id: $id, input: { name: "Rex on the primary" }) { name } }', { id: petId }, { key: admin });
      expect(written.status).toBe(200);
      try {
        await waitFor(async () => (await statesOn(r.instances)).every((state) => state === 'detached'), 20_000, 'every instance to show the replica detached');
      } finally {
        printFigure(what, { states: await statesOn(r.instances) });
      }
      const names = [];
      for (const instance of [a, b]) {
        for (const key of [undefined, admin]) {
          const read = await gql<{ pet: { name: string } }>(instance.url, 'query($id: ID!) { pet(id: $id) { name } }', { id: petId }, key ? { key } : {});
          names.push(read.data?.pet.name);
        }
      }
      expect(names).toEqual(Array(4).fill('Rex on the primary'));
      for (const instance of [a, b]) {
        expect(await metric(instance, 'petstore_db_replica_state', { state: 'detached' })).toBe(1);
        expect(await metric(instance, 'petstore_db_replica_state', { state: 'ok' })).toBe(0);
      }
    });
  });
}

failoverCases('a replica promoted, then written to', false, async (r, petId) => {
  await r.replica.promote();
  await renameOn(r.replica.url, petId, 'Rex on the promoted replica');
});

failoverCases('a replica that follows a promoted standby onto another timeline', true, async (r) => {
  await r.relay!.promote();
});
