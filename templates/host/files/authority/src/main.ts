import { AUTHORITY_NODE } from '@baton/authority-transfer';
import { runStartScript } from './start-script.js';

// `npm start`: {{name}} from config/host.json until Ctrl-C (see start-script.ts).
runStartScript((host) => {
  const node = host.get(AUTHORITY_NODE);
  return `control API ${node.controlAddress.url}, public API ${node.publicAddress.url}`;
});
