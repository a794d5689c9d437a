import Hapi from '@hapi/hapi';
import { startApi } from '../test/helpers/api.ts';
import { temporalServerInfo } from '../test/helpers/temporal-server.ts';
import { CONNECTIONS, DURATION_S, failOnBadResponses, measure, type Row, table, WARMUP_S } from './load.ts';
import { runContext, writeResults } from './results.ts';
import { UNLIMITED_RATES } from './streaming.ts';

// Throughput and latency of GET /v1/me and GET /v1/api-keys on the real stack
// (PostgreSQL, Redis, Temporal), side by side with a bare hapi route in the
// same run, so the numbers read as "what the API costs on top of hapi".
// Usage: sh scripts/node.sh bench/api.ts    (bench/README.md has the details)
//
// The API runs in this process, wired exactly as the tests wire it; autocannon
// fires from a worker thread so the load generator does not share the
// server's event loop.

/** Rounds of the three targets, one after the other (BENCH_ROUNDS, 1 unless said). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '1');
const round2 = (value: number) => Math.round(value * 100) / 100;

async function main() {
  const api = await startApi(UNLIMITED_RATES);
  const bare = Hapi.server({ host: '127.0.0.1', port: 0 });
  bare.route({ method: 'GET', path: '/ok', handler: () => ({ ok: true }) });
  await bare.start();

  try {
    const ws = await api.workspace('Bench');
    const auth = { authorization: `Bearer ${ws.keys.live}` };
    for (const path of ['/v1/me', '/v1/api-keys']) {
      const probe = await api.call('GET', path, { key: ws.keys.live });
      if (probe.status !== 200) throw new Error(`GET ${path} answered ${probe.status}: ${probe.text}`);
    }

    console.error(
      `bench: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per route, autocannon in a worker thread`,
    );
    const startedAt = new Date();
    const rows: Row[] = [];
    // Rounds alternate the targets, so a mood of the machine falls on all of them: the ratio of one
    // round is the figure, and with several rounds their median.
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const measured: Row[] = [];
      for (const [route, url, headers] of [
        ['bare hapi GET /ok', `http://127.0.0.1:${bare.info.port}/ok`, {}],
        ['GET /v1/me', `${api.url}/v1/me`, auth],
        ['GET /v1/api-keys', `${api.url}/v1/api-keys`, auth],
      ] as const) {
        console.error(`bench: round ${round} of ${ROUNDS}, ${route}…`);
        measured.push(await measure(route, url, headers));
      }
      const [bareRow, meRow] = measured as [Row, Row, Row];
      ratios.push(round2(meRow.requests_per_second / bareRow.requests_per_second));
      rows.push(...measured);
    }

    const sorted = [...ratios].sort((a, b) => a - b);
    const median = sorted[Math.floor((sorted.length - 1) / 2)] as number;
    const markdown = [
      table(rows),
      '',
      `GET /v1/me ÷ bare hapi, by round: ${ratios.join(', ')}; median ${median}.`,
    ].join('\n');
    console.log(markdown);

    const report = {
      ...runContext(startedAt),
      // The API's Temporal client is on this one (VALISE_TEMPORAL: the dev server or the server on PostgreSQL).
      temporal: await temporalServerInfo(api.services.config.temporal.address),
      me_over_bare: { by_round: ratios, median },
      settings: {
        rounds: ROUNDS,
        duration_s: DURATION_S,
        warmup_s: WARMUP_S,
        connections: CONNECTIONS,
        database_pool: api.services.config.database.poolSize,
      },
      rows,
      markdown,
    };
    const file = writeResults('api', startedAt, report);
    console.error(`bench: wrote ${file}`);

    failOnBadResponses(rows);
  } finally {
    await bare.stop();
    await api.close();
  }
}

await main();
