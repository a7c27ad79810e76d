/**
 * `rubricate/report`: the self-contained HTML (or Markdown) report of a results, compare or
 * meta-evaluation file, as `rubricate report` writes it.
 */
export { writeReportFromResults as writeReport, buildReport, renderReport } from '../report/index.js';
export type { WriteReportOptions, ReportDocument, WrittenReport } from '../report/index.js';
export type { ReportFormat, ReportPayload } from '../report/types.js';
