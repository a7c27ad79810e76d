/** rubricate's own results JSONL, read back for re-scoring and reports. */
import { readResults } from '../../results/results.js';
import type { ResultsImporter } from './types.js';

export const resultsImporter: ResultsImporter = {
  name: 'results',
  accepts: [],
  description: 'rubricate results JSONL (the output of grade)',
  read: (file) => readResults(file),
};
