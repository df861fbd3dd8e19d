/** The `priority` field of triggers and agents, as the APIs accept it (src/common/priority.ts). */
import { z } from 'zod';
import { PRIORITY_MAX, PRIORITY_MIN } from './priority';

export const PrioritySchema = z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX)
  .meta({ description: `Temporal priority key of the runs or invocations it starts: ${PRIORITY_MIN} runs first, ${PRIORITY_MAX} last; absent or null: the default (3)` });
