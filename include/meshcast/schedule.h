/* Pipeline schedules (lib/schedule). Being written: see issue 5. */
#ifndef MESHCAST_SCHEDULE_H
#define MESHCAST_SCHEDULE_H
typedef struct mc_schedule mc_schedule_t;
#endif
