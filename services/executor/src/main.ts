import { hostToolPack, loadToolPack } from '@gatehouse/runtime';
import { executorMain } from './executor-main.js';

// The executor hosts the tool pack GATEHOUSE_TOOL_PACK names; it imports no domain.
await executorMain(async (config) => hostToolPack(await loadToolPack(config.toolPack ?? ''), process.env));
