import type { Flat } from '../opt/flat';
import { entry, envelope, getQuantity, isObject, putCoded, putQuantity, slot, textOf, type Json, type SimpleForm } from './shared';

const BLOOD_PRESSURE = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const REGULARITY = { regular: 'at0006', irregular: 'at1028' } as const;

export const vitalSigns: SimpleForm = {
  root: 'vital_signs',
  definition: {
    type: 'object',
    children: {
      blood_pressure: slot(BLOOD_PRESSURE),
      pulse: slot('openEHR-EHR-OBSERVATION.pulse.v2', false),
      recorded_at: { type: 'date_time', required: true },
    },
  },
  toFlat(c, composer) {
    const root = 'vital_signs';
    const time = c.recorded_at as string;
    const flat: Flat = envelope(root, composer, time);
    const bp = `${root}/blood_pressure/any_event:0`;
    Object.assign(flat, entry(`${root}/blood_pressure`));
    putQuantity(flat, `${bp}/systolic`, c.blood_pressure.systolic);
    putQuantity(flat, `${bp}/diastolic`, c.blood_pressure.diastolic);
    const position = c.blood_pressure.position?.code as string | undefined;
    if (position) putCoded(flat, `${bp}/position`, 'local', position, textOf(BLOOD_PRESSURE, 'position', position)!);
    flat[`${bp}/time`] = time;
    if (isObject(c.pulse)) {
      const pulse = `${root}/pulse_heart_beat/any_event:0`;
      Object.assign(flat, entry(`${root}/pulse_heart_beat`));
      putQuantity(flat, `${pulse}/rate`, c.pulse.rate);
      if (typeof c.pulse.regular === 'boolean')
        putCoded(flat, `${pulse}/regularity`, 'local', c.pulse.regular ? REGULARITY.regular : REGULARITY.irregular, c.pulse.regular ? 'Regular' : 'Irregular');
      flat[`${pulse}/time`] = time;
    }
    return flat;
  },
  fromFlat(flat) {
    const bp = 'vital_signs/blood_pressure/any_event:0';
    const pulse = 'vital_signs/pulse_heart_beat/any_event:0';
    const position = flat[`${bp}/position|code`];
    const content: Json = {
      blood_pressure: {
        systolic: getQuantity(flat, `${bp}/systolic`),
        diastolic: getQuantity(flat, `${bp}/diastolic`),
        ...(position !== undefined ? { position: { code: position, value: flat[`${bp}/position|value`] } } : {}),
      },
    };
    if (Object.keys(flat).some((k) => k.startsWith('vital_signs/pulse_heart_beat/'))) {
      const rate = getQuantity(flat, `${pulse}/rate`);
      const regularity = flat[`${pulse}/regularity|code`];
      content.pulse = {
        ...(rate ? { rate } : {}),
        ...(regularity !== undefined ? { regular: regularity === REGULARITY.regular } : {}),
      };
    }
    content.recorded_at = flat[`${bp}/time`];
    return content;
  },
};
