import { validationError } from '../../../../../common/errors';

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An AQL function's value (`at`: the query's NOW); a wrong call is a 400, whatever the data. */
export function callFunction(name: string, args: unknown[], at: Date): unknown {
  const bad = (message: string): never => {
    throw validationError(`AQL: ${name}() ${message}`, [{ path: 'q', message: `${name}: ${message}` }]);
  };
  const arity = (min: number, max = min) => {
    if (args.length < min || args.length > max) bad(`takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}`);
  };
  const now = at.toISOString();
  switch (name) {
    case 'NOW':
    case 'CURRENT_DATE_TIME':
      arity(0);
      return now;
    case 'CURRENT_DATE':
      arity(0);
      return now.slice(0, 10);
    case 'CURRENT_TIME':
      arity(0);
      return now.slice(11, 19);
    case 'CURRENT_TIMEZONE':
      arity(0);
      return 'Z';
    case 'CONCAT':
      if (args.length === 0) bad('takes at least one argument');
      return args.some((a) => a === null) ? null : args.map(text).join('');
    case 'CONCAT_WS':
      if (args.length < 2) bad('takes a separator and at least one value');
      return args[0] === null
        ? null
        : args
            .slice(1)
            .filter((a) => a !== null)
            .map(text)
            .join(text(args[0]));
    default:
  }
  if (args.some((a) => a === null || a === undefined)) {
    // Arity is still checked: a wrong call is a 400 whatever the data.
    arity(...ARITY[name]);
    return null;
  }
  arity(...ARITY[name]);
  switch (name) {
    case 'LENGTH':
      return text(args[0]).length;
    case 'CONTAINS':
      return text(args[0]).includes(text(args[1]));
    case 'POSITION':
      return text(args[1]).indexOf(text(args[0])) + 1;
    case 'SUBSTRING': {
      const start = number(args[1], bad) - 1;
      return args.length === 3 ? text(args[0]).substr(Math.max(0, start), number(args[2], bad)) : text(args[0]).slice(Math.max(0, start));
    }
    case 'ABS':
      return Math.abs(number(args[0], bad));
    case 'MOD':
      return number(args[0], bad) % number(args[1], bad);
    case 'CEIL':
      return Math.ceil(number(args[0], bad));
    case 'FLOOR':
      return Math.floor(number(args[0], bad));
    case 'ROUND': {
      const factor = 10 ** (args.length === 2 ? number(args[1], bad) : 0);
      return Math.round(number(args[0], bad) * factor) / factor;
    }
    default:
      return bad('is not supported');
  }
}

const ARITY: Record<string, [number, number]> = {
  LENGTH: [1, 1],
  CONTAINS: [2, 2],
  POSITION: [2, 2],
  SUBSTRING: [2, 3],
  ABS: [1, 1],
  MOD: [2, 2],
  CEIL: [1, 1],
  FLOOR: [1, 1],
  ROUND: [1, 2],
};

function text(v: unknown): string {
  if (isObject(v) && typeof v.value === 'string') return v.value;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function number(v: unknown, bad: (message: string) => never): number {
  if (typeof v === 'number') return v;
  if (isObject(v) && typeof v.magnitude === 'number') return v.magnitude;
  return bad('takes numbers');
}
