import Hapi from '@hapi/hapi';

// Bare hapi as its own process, one route returning {ok: true}: what bench/scale.ts holds an API
// process against, on the same machine at the same moment (bench/README.md).
const server = Hapi.server({ host: '127.0.0.1', port: Number(process.env.API_PORT) });
server.route({ method: 'GET', path: '/ok', handler: () => ({ ok: true }) });
await server.start();
process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));
