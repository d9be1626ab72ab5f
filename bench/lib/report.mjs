// Turns the results object into the markdown report.

const num = (v, digits = 0) =>
  v === null || v === undefined || Number.isNaN(v)
    ? '–'
    : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

const COLUMNS = [
  'Scenario',
  'Server',
  'conn',
  'req/s',
  'p50 ms',
  'p99 ms',
  'non-2xx',
  'errors',
  'CPU s',
  'CPU % core',
  'CPU µs/req',
  'DB CPU % core',
  'load gen % core',
  'other % core',
  'peak RSS MB',
  'vs baseline',
];

const TASK_COLUMNS = [
  'Scenario',
  'result',
  'wall s',
  'CPU s',
  'CPU % core',
  'DB CPU % core',
  'sink % core',
  'other % core',
  'peak RSS MB',
];

function row(scenario, server, connections, m, ratio) {
  return [
    scenario,
    server,
    num(connections),
    num(m.reqPerSec),
    num(m.latencyP50Ms),
    num(m.latencyP99Ms),
    num(m.non2xx),
    num(m.errors),
    num(m.cpuSeconds, 2),
    num(m.cpuPercentOfCore),
    num(m.cpuMicrosPerRequest),
    num(m.dbCpuPercentOfCore),
    num(m.machine?.harnessCpuPercentOfCore),
    num(m.machine?.otherCpuPercentOfCore),
    num(m.peakRssMb),
    ratio,
  ];
}

const table = (columns, rows, textColumns = 2) => [
  `| ${columns.join(' | ')} |`,
  `|${columns.map((_, i) => (i < textColumns ? ' --- ' : ' ---: ')).join('|')}|`,
  ...rows.map((r) => `| ${r.join(' | ')} |`),
];

export function toMarkdown(results) {
  const { machine, settings } = results;
  const conns = settings.connectionsFromCommandLine
    ? `${settings.connections} connections (--connections) for every row`
    : `${settings.connections} connections unless a scenario sets its own (column "conn")`;
  const lines = [
    `# Pigeon benchmarks — ${results.date}`,
    '',
    `Node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, ${num(machine.totalMemMb)} MB RAM, ` +
      `commit ${machine.commit ?? 'unknown'}. ${conns}, ` +
      `${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per row; ` +
      `the load generator runs on the same machine.` +
      (settings.pigeonEnv?.RATE_LIMIT_PER_MINUTE
        ? ` Pigeon runs with RATE_LIMIT_PER_MINUTE=${num(settings.pigeonEnv.RATE_LIMIT_PER_MINUTE)} ` +
          '(requests are counted, never refused).'
        : '') +
      (() => {
        const extra = Object.entries(settings.pigeonEnv ?? {}).filter(([k]) => k !== 'RATE_LIMIT_PER_MINUTE');
        return extra.length
          ? ` Every Pigeon also gets ${extra.map(([k, v]) => `${k}=${v}`).join(', ')} (--pigeon-env).`
          : '';
      })() +
      ' Scenarios with a `pigeonEnv` run on a Pigeon of their own, after the others (see their notes).' +
      (results.totalSeconds ? ` Whole run: ${num(results.totalSeconds)} s.` : ''),
  ];

  // A scenario's `target` is one target or an array of them: one row each.
  const targets = results.scenarios.flatMap((s) => [s.target ?? []].flat().map((target) => ({ name: s.name, target })));
  if (targets.length) {
    lines.push('', '## Targets', '');
    lines.push(
      ...table(
        ['Scenario', 'target', 'measured', 'met'],
        targets.map(({ name, target: t }) => [
          name,
          t.label,
          t.actual === null ? '–' : `${num(t.actual, t.digits ?? 0)}${t.unit ? ` ${t.unit}` : ''}`,
          t.met ? '✅ met' : `❌ not met${t.reason ? ` (${t.reason})` : ''}`,
        ]),
        2,
      ).map((l, i) => (i === 1 ? '| --- | --- | ---: | --- |' : l)),
    );
  }

  const loads = results.scenarios.filter((s) => !s.error && s.pigeon);
  if (loads.length) {
    lines.push('', '## Load runs (autocannon)', '');
    const rows = [];
    for (const s of loads) {
      const ratio =
        s.ratio === null
          ? '–'
          : `${num(s.ratio * 100, 1)}% of ${s.baseline.name}, CPU/req ×${num(s.pigeon.cpuRatio, 2)}`;
      const others = (s.others ?? []).map(
        (o) => `; ${num(o.ratio * 100, 1)}% of ${o.name}, CPU/req ×${num(o.cpuRatio, 2)}`,
      );
      rows.push(row(s.name, 'Pigeon', s.connections ?? settings.connections, s.pigeon, ratio + others.join('')));
      for (const b of [s.baseline, ...(s.others ?? [])].filter(Boolean))
        rows.push(row(s.name, b.name, s.connections ?? settings.connections, b, ''));
    }
    lines.push(...table(COLUMNS, rows));
  }

  const tasks = results.scenarios.filter((s) => !s.error && s.task);
  if (tasks.length) {
    lines.push('', '## Timed tasks', '');
    lines.push(
      ...table(
        TASK_COLUMNS,
        tasks.map(({ name, task: m }) => [
          name,
          m.summary ?? '',
          num(m.wallSeconds, 2),
          num(m.cpuSeconds, 2),
          num(m.cpuPercentOfCore),
          num(m.dbCpuPercentOfCore),
          num(m.sinkCpuPercentOfCore),
          num(m.machine?.otherCpuPercentOfCore),
          num(m.peakRssMb),
        ]),
      ),
    );
  }

  if (results.fixtures?.length) {
    lines.push('', '## Setup (fixtures, once per run)', '');
    for (const f of results.fixtures) {
      lines.push(
        f.error
          ? `- **${f.name}** failed: ${f.error.split('\n')[0]}`
          : `- **${f.name}** (${num(f.seconds, 1)} s): ${f.summary ?? f.description ?? ''}`,
      );
    }
  }

  const failed = results.scenarios.filter((s) => s.error);
  if (failed.length) {
    lines.push('', '## Failed', '');
    for (const s of failed) lines.push(`- **${s.name}** failed: ${s.error.split('\n')[0]}`);
  }

  const noted = results.scenarios.filter((s) => s.notes?.length || s.attachments?.length);
  if (noted.length) {
    lines.push('', '## Notes');
    for (const s of noted) {
      lines.push('', `### ${s.name}`, '');
      for (const n of s.notes ?? []) lines.push(`- ${n}`);
      for (const a of s.attachments ?? []) lines.push('', `${a.title}:`, '', '```', a.text.trimEnd(), '```');
    }
  }

  if (results.profiles?.length) {
    lines.push('', '## CPU profiles (--cpu-prof)', '');
    lines.push(
      "Pigeon's node process over its whole life (start-up, setup and the runs), self time; open the file in " +
        'Chrome DevTools (Performance) or speedscope for the call tree.',
    );
    for (const p of results.profiles) lines.push('', `### ${p.for}: \`${p.file}\``, '', '```', p.summary, '```');
  }

  lines.push(
    '',
    'CPU and RSS are the server process only (for Pigeon: the node process; "DB CPU" is its embedded ' +
      'PostgreSQL; "sink" the SMTP sink process of the sending scenarios). "load gen" is the harness process ' +
      '(autocannon), "other" the rest of the machine\'s busy CPU (/proc/stat): other processes competing for ' +
      'the cores, so a row with a high "other" is not comparable. ' +
      'Peak RSS is VmHWM, the peak over the process lifetime up to that row. ' +
      'Latencies are whole milliseconds (autocannon); p50 is the median.',
    '',
  );
  return lines.join('\n');
}
