// Turns the results object into the markdown report.

const num = (v, digits = 0) =>
  v === null || v === undefined || Number.isNaN(v)
    ? '–'
    : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

const COLUMNS = [
  'Scenario',
  'Server',
  'req/s',
  'p50 ms',
  'p99 ms',
  'non-2xx',
  'errors',
  'CPU s',
  'CPU % core',
  'CPU µs/req',
  'DB CPU % core',
  'peak RSS MB',
  'vs baseline',
];

function row(scenario, server, m, ratio) {
  return [
    scenario,
    server,
    num(m.reqPerSec),
    num(m.latencyP50Ms),
    num(m.latencyP99Ms),
    num(m.non2xx),
    num(m.errors),
    num(m.cpuSeconds, 2),
    num(m.cpuPercentOfCore),
    num(m.cpuMicrosPerRequest),
    num(m.dbCpuPercentOfCore),
    num(m.peakRssMb),
    ratio,
  ];
}

export function toMarkdown(results) {
  const { machine, settings } = results;
  const lines = [
    `# Pigeon benchmarks — ${results.date}`,
    '',
    `Node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, ${num(machine.totalMemMb)} MB RAM, ` +
      `commit ${machine.commit ?? 'unknown'}. ${settings.connections} connections, ` +
      `${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per row; ` +
      'the load generator runs on the same machine.',
    '',
    `| ${COLUMNS.join(' | ')} |`,
    `|${COLUMNS.map((_, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`,
  ];
  const failed = [];
  for (const s of results.scenarios) {
    if (s.error) {
      failed.push(`- **${s.name}** failed: ${s.error.split('\n')[0]}`);
      continue;
    }
    const ratio = s.ratio === null ? '–' : `${num(s.ratio * 100, 1)}% of ${s.baseline.name}`;
    lines.push(`| ${row(s.name, 'Pigeon', s.pigeon, ratio).join(' | ')} |`);
    if (s.baseline) lines.push(`| ${row(s.name, s.baseline.name, s.baseline, '').join(' | ')} |`);
  }
  if (failed.length) lines.push('', ...failed);
  lines.push(
    '',
    'CPU and RSS are the server process only (for Pigeon: the node process; "DB CPU" is its embedded ' +
      'PostgreSQL). Peak RSS is VmHWM, the peak over the process lifetime up to that row.',
    '',
  );
  return lines.join('\n');
}
