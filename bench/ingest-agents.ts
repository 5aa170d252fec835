/** The ingest benchmarks' agent ids: one per cluster, and the generated one. */
export const BASE_AGENT = '00000000-0000-4000-8000-000000000000';
export const agentOf = (i: number) =>
  `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
