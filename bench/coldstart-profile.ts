/**
 * Where a cold start's CPU goes (`npm run bench -- coldstart --profile`):
 * the V8 CPU profiles the runtime's stand-in records of a bundle's load and
 * first invocation (test/helpers/lambda-runtime.mjs), charged to what the
 * bundle holds. A sample is charged to the innermost frame of the bundle's
 * own code in its stack, read through the bundle's source map: a package
 * (`pg`, `@nats-io/nats-core`) or a folder of the project
 * (`shared/live`); so Node's TLS or HTTP code is charged to the package or
 * module that called it. A sample with no frame of the bundle in its stack
 * (the event loop's own callbacks, Node's loader, V8's compiler and
 * collector) is charged to Node or V8 by name; `(idle)` is time spent
 * waiting, on the database, the agent or the machine's other processes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';

/** The fields of a `.cpuprofile` (V8's Profiler.Profile) read here. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: {
      functionName: string;
      url: string;
      lineNumber: number;
      columnNumber: number;
    };
    children?: number[];
  }[];
  samples: number[];
  /** Microseconds before each sample (the first from the profile's start). */
  timeDeltas: number[];
}

/** Microseconds of a phase by what they are charged to. */
export type Charges = Map<string, number>;

/** A function's profiled runs, summed: its load's and first answer's charges. */
export interface ProfiledPhases {
  load: Charges;
  firstAnswer: Charges;
  runs: number;
}

/** The sum of a map's values. */
const sumOf = (values: Map<string, number>) =>
  [...values.values()].reduce((sum, us) => sum + us, 0);

/**
 * The charge of a source file of the bundle (as its source map names it,
 * relative to where the bundle was built): its package, else the project's
 * folder (a file at the root of one by its name). The project's part of
 * the path is from the last of its top folders' names in it: the checkout
 * may sit anywhere, under a folder of any name.
 */
export function chargeOfSource(source: string): string {
  const modules = source.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const [scope, name] = source
      .slice(modules + 'node_modules/'.length)
      .split('/');
    return scope!.startsWith('@') ? `${scope}/${name}` : scope!;
  }
  const project = /.*(?:^|\/)((?:shared|functions|bench|infra|test)\/.*)$/.exec(
    source,
  );
  const path = project ? project[1]! : source.replace(/^(\.\.\/)+/, '');
  const parts = path.split('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : path;
}

/**
 * The bundle's code no source maps to: esbuild's own helpers, above all
 * the wrapper that runs a module's body on its first require. V8 compiles
 * a function when it is first called and the profiler charges that to the
 * caller, so this is mostly the compiling of the modules a phase loads.
 */
export const UNMAPPED =
  'bundle: esbuild helpers (compiling modules as first required)';

/** A frame outside the bundle, charged to Node by builtin or to V8. */
function chargeOfRuntime(url: string, functionName: string): string {
  if (url === '')
    return functionName.startsWith('(') ? functionName : 'node (native)';
  const builtin = /^node:(?:internal\/)?([^/]+)/.exec(url);
  // node:_http_client and node:internal/stream_base_commons: http, stream.
  if (builtin)
    return `node (${builtin[1]!.replace(/^_/, '').replace(/_.*$/, '')})`;
  return `other (${url.split('/').pop()})`;
}

/**
 * Charges each sample of `profile` (see the module's comment). `bundleUrl`
 * names the bundle's frames; `map` is its source map.
 */
export function chargeProfile(
  profile: CpuProfile,
  bundleUrl: (url: string) => boolean,
  map: SourceMap,
): Charges {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  }
  const chargeOfNode = new Map<number, string>();
  const charge = (id: number): string => {
    const known = chargeOfNode.get(id);
    if (known !== undefined) return known;
    const leaf = byId.get(id)!.callFrame;
    let found: string | undefined;
    for (
      let at: number | undefined = id;
      at !== undefined;
      at = parentOf.get(at)
    ) {
      const frame = byId.get(at)!.callFrame;
      if (!bundleUrl(frame.url)) continue;
      const entry = map.findEntry(frame.lineNumber, frame.columnNumber);
      found =
        'originalSource' in entry && entry.originalSource
          ? chargeOfSource(entry.originalSource)
          : UNMAPPED;
      break;
    }
    const result = found ?? chargeOfRuntime(leaf.url, leaf.functionName);
    chargeOfNode.set(id, result);
    return result;
  };
  const charges: Charges = new Map();
  profile.samples.forEach((id, i) => {
    // A sample's time is the gap to the next one; the last has none.
    const us = profile.timeDeltas[i + 1] ?? 0;
    const to = charge(id);
    charges.set(to, (charges.get(to) ?? 0) + us);
  });
  return charges;
}

/** Each bundle's source map (beside it), read once for all its runs. */
const sourceMaps = new Map<string, SourceMap>();

function sourceMapOf(bundleFile: string): SourceMap {
  let map = sourceMaps.get(bundleFile);
  if (map === undefined) {
    map = new SourceMap(JSON.parse(readFileSync(`${bundleFile}.map`, 'utf8')));
    sourceMaps.set(bundleFile, map);
  }
  return map;
}

/**
 * Charges one run's two profiles (`load.cpuprofile`, `first-answer.cpuprofile`
 * in `profileDir`) into `into`. A run that died before its first answer
 * wrote no profile of it and adds nothing: its failure is the row's.
 */
export function addProfiledRun(
  into: ProfiledPhases,
  profileDir: string,
  bundleFile: string,
): void {
  const firstAnswer = join(profileDir, 'first-answer.cpuprofile');
  if (!existsSync(firstAnswer)) return;
  const charge = (file: string) =>
    chargeProfile(
      JSON.parse(readFileSync(file, 'utf8')) as CpuProfile,
      (url) => url.endsWith(bundleFile),
      sourceMapOf(bundleFile),
    );
  addCharges(into.load, charge(join(profileDir, 'load.cpuprofile')));
  addCharges(into.firstAnswer, charge(firstAnswer));
  into.runs += 1;
}

function addCharges(into: Charges, charges: Charges): void {
  for (const [to, us] of charges) into.set(to, (into.get(to) ?? 0) + us);
}

/**
 * The table of one function's phases, in ms a run (the mean of `runs`):
 * the `top` largest charges of the first answer, the rest summed.
 */
export function chargesTable(phases: ProfiledPhases, top = 16): string[] {
  const { runs } = phases;
  const msOf = (us: number | undefined) => ((us ?? 0) / 1000 / runs).toFixed(1);
  const names = [
    ...new Set([...phases.firstAnswer.keys(), ...phases.load.keys()]),
  ].sort(
    (a, b) =>
      (phases.firstAnswer.get(b) ?? 0) - (phases.firstAnswer.get(a) ?? 0) ||
      (phases.load.get(b) ?? 0) - (phases.load.get(a) ?? 0),
  );
  const shown = names.slice(0, top);
  const rest = names.slice(top);
  const restOf = (charges: Charges) =>
    rest.reduce((sum, name) => sum + (charges.get(name) ?? 0), 0);
  return [
    '| charged to | load ms | first answer ms |',
    '|---|---:|---:|',
    ...shown.map(
      (name) =>
        `| ${name} | ${msOf(phases.load.get(name))} | ${msOf(phases.firstAnswer.get(name))} |`,
    ),
    ...(rest.length > 0
      ? [
          `| ${rest.length} more | ${msOf(restOf(phases.load))} | ${msOf(restOf(phases.firstAnswer))} |`,
        ]
      : []),
    `| **profiled** | **${msOf(sumOf(phases.load))}** | **${msOf(sumOf(phases.firstAnswer))}** |`,
  ];
}

/** The groups of the comparison table, in its order. */
export const CHARGE_GROUPS = [
  'pg',
  'NATS client',
  'zod',
  'middy, Powertools',
  'the login secret read (shared/http-exchange.ts)',
  "the project's other code",
  'compiling modules as first required',
  'Node, outside the bundle',
  'V8 (collector, compiler)',
  '(idle)',
] as const;

/** Which group of {@link CHARGE_GROUPS} a charge belongs to. */
export function groupOf(charge: string): (typeof CHARGE_GROUPS)[number] {
  if (/^(pg|pg-.*|pgpass|postgres-.*|split2)$/.test(charge)) return 'pg';
  if (charge.startsWith('@nats-io/')) return 'NATS client';
  if (charge === 'zod') return 'zod';
  if (/^(@middy\/|@aws-lambda-powertools\/|@aws\/)/.test(charge)) {
    return 'middy, Powertools';
  }
  if (charge === 'shared/http-exchange.ts') {
    return 'the login secret read (shared/http-exchange.ts)';
  }
  if (/^(shared|functions|bench)(\/|$)/.test(charge)) {
    return "the project's other code";
  }
  if (charge === UNMAPPED) return 'compiling modules as first required';
  if (charge === '(idle)') return '(idle)';
  if (charge.startsWith('(')) return 'V8 (collector, compiler)';
  return 'Node, outside the bundle';
}

/**
 * Functions side by side: each group's CPU over the load and the first
 * answer together, in ms a run, and the profiled total.
 */
export function groupsTable(
  functions: { name: string; phases: ProfiledPhases }[],
): string[] {
  const sums = functions.map(({ phases }) => {
    const byGroup = new Map<string, number>();
    for (const charges of [phases.load, phases.firstAnswer]) {
      for (const [charge, us] of charges) {
        const group = groupOf(charge);
        byGroup.set(group, (byGroup.get(group) ?? 0) + us / phases.runs);
      }
    }
    return byGroup;
  });
  const ms = (us: number) => (us / 1000).toFixed(1);
  return [
    `| load + first answer, ms a run | ${functions.map((f) => f.name).join(' | ')} |`,
    `|---|${functions.map(() => '---:').join('|')}|`,
    ...CHARGE_GROUPS.map(
      (group) =>
        `| ${group} | ${sums.map((byGroup) => ms(byGroup.get(group) ?? 0)).join(' | ')} |`,
    ),
    `| **profiled** | ${sums.map((byGroup) => `**${ms(sumOf(byGroup))}**`).join(' | ')} |`,
  ];
}
