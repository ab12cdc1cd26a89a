/** One sample line of the Prometheus text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One /metrics scrape. */
export interface Scrape {
  text: string;
  /** Every sample name the text exposes (histograms as their _bucket, _sum and _count series). */
  names: Set<string>;
  /** Label names seen on each sample name. */
  labelsOf(name: string): Set<string>;
  /** Samples of a series (a histogram: its `_count` series) whose labels include `labels`. */
  samples(name: string, labels?: Record<string, string>): Sample[];
  /** The summed value of the matching samples (a histogram: its observation count). */
  total(name: string, labels?: Record<string, string>): number;
}

// Sample lines per the text exposition format: name, optional {label="value",…} with \\, \" and \n escapes, value.
const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;

/**
 * Parses a scrape. A small parser of our own: the npm parser we tried
 * (parse-prometheus-text-format) drops a histogram's labels when `le` comes
 * first, as prom-client writes it.
 */
function parseScrape(text: string): Scrape {
  const all: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL)) labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    all.push({ name: match[1], labels, value: Number(match[3]) });
  }
  const names = new Set(all.map((s) => s.name));
  const samples: Scrape['samples'] = (name, labels = {}) => {
    const series = names.has(name) ? name : `${name}_count`;
    return all.filter((s) => s.name === series && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  };
  return {
    text,
    names,
    labelsOf: (name) => new Set(all.filter((s) => s.name === name).flatMap((s) => Object.keys(s.labels))),
    samples,
    total: (name, labels) => samples(name, labels).reduce((sum, s) => sum + s.value, 0),
  };
}

export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  return parseScrape(await response.text());
}
