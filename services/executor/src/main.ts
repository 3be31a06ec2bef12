import { referenceCatalog, referenceImplementations } from '@gatehouse/reference-tools';
import { executorMain } from './executor-main.js';

await executorMain(() => ({ catalog: referenceCatalog(), implementations: referenceImplementations }));
