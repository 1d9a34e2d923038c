import { STREAM_NODE } from '@baton/stream-transfer';
import { runStartScript } from './start-script.js';

// `npm start`: {{name}} from config/host.json until Ctrl-C (see start-script.ts).
runStartScript((host) => `stream API ${host.get(STREAM_NODE).url}`);
