/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow table: fixed capacity, in GPU memory (or host memory for the
 * CPU pipeline), updated by many threads at once with the same code on
 * the CPU and the GPU, with flow expiry into the export ring
 * (flow_ring.h). Without a ring flows never end: a top-N table.
 * The design (slot states, the record word, the four steps, why records
 * stay exact): doc/flow-table.md. By concern:
 *   flow_layout.h  slot states, record word, entry and table layout
 *   flow_key.h     hash and key compare
 *   flow_due.h     timeouts and TCP rules: when a record is due
 *   flow_end.h     ring reservation and ending records into the ring
 *   flow_slot.h    probe, insert, pin
 *   flow_record.h  plan, commit, finish, and the per-packet update
 *   flow_expiry.h  the expiry scan
 *   flow_host.h    setup and the host's reads of a quiescent table
 */
#ifndef GPURX_FLOW_TABLE_H
#define GPURX_FLOW_TABLE_H

#include "flow_layout.h"
#include "flow_key.h"
#include "flow_due.h"
#include "flow_end.h"
#include "flow_slot.h"
#include "flow_record.h"
#include "flow_expiry.h"
#include "flow_host.h"

#endif /* GPURX_FLOW_TABLE_H */
