//! The stats rtfprof reads, known by their names' metadata ids: one map per
//! plane, made once, asked once per stat that an event has (a stat names
//! its metadata by id, and a plane numbers its stat metadata its own way).

use super::decode::{Plane, Stat, StatValue};
use super::ids::IdMap;

/// Every stat rtfprof reads, named after XProf's `StatType`s
/// (`tsl/profiler/utils/xplane_schema.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatKind {
    // Steps.
    /// `id`: the step (TF's executor) an event runs in.
    StepId,
    StepNum,
    IterNum,
    StepName,
    GroupId,
    GraphType,
    // Grouping: producer and consumer contexts, roots.
    /// `_pt`, `_p`, `_ct`, `_c`.
    ProducerType,
    ProducerId,
    ConsumerType,
    ConsumerId,
    /// `_pid`: the process of a context, where it is not the plane's.
    ContextPid,
    /// `process_id`: a plane's process.
    ProcessId,
    /// `_r`: a root's level.
    IsRoot,
    /// `_a`.
    IsAsync,
    /// `_ipl_stage_name`: a stage of the input pipeline.
    InputPipelineStageName,
    // What an event runs.
    TfOp,
    HloOp,
    ProgramId,
    /// `Hlo Proto`, on the metadata plane.
    HloProto,
    /// `level 0` and `annotation`: TF's annotations of GPU work.
    Level0,
    Annotation,
    CorrelationId,
    KernelDetails,
    Equation,
    CudaGraphNodeId,
    /// `shape`.
    TensorShapes,
    DeviceOffsetPs,
    DeviceDurationPs,
    // Allocators.
    AllocatorName,
    IndexOnHost,
    DeviceOrdinal,
    /// `addr`.
    Address,
    RequestedBytes,
    AllocationBytes,
    BytesAllocated,
    BytesReserved,
    // Devices.
    /// `device_vendor`: a device plane's maker ("Nvidia", "AMD").
    DeviceVendor,
}

impl StatKind {
    /// The stat a stat metadata's name names, if rtfprof reads it.
    fn of(name: &str) -> Option<StatKind> {
        use StatKind::*;
        Some(match name {
            "id" => StepId,
            "step_num" => StepNum,
            "iter_num" => IterNum,
            "step_name" => StepName,
            "group_id" => GroupId,
            "graph_type" => GraphType,
            "_pt" => ProducerType,
            "_p" => ProducerId,
            "_ct" => ConsumerType,
            "_c" => ConsumerId,
            "_pid" => ContextPid,
            "process_id" => ProcessId,
            "_r" => IsRoot,
            "_a" => IsAsync,
            "_ipl_stage_name" => InputPipelineStageName,
            "tf_op" => TfOp,
            "hlo_op" => HloOp,
            "program_id" => ProgramId,
            "Hlo Proto" => HloProto,
            "level 0" => Level0,
            "annotation" => Annotation,
            "correlation_id" => CorrelationId,
            "kernel_details" => KernelDetails,
            "equation" => Equation,
            "cuda_graph_node_id" => CudaGraphNodeId,
            "shape" => TensorShapes,
            "device_offset_ps" => DeviceOffsetPs,
            "device_duration_ps" => DeviceDurationPs,
            "allocator_name" => AllocatorName,
            "index_on_host" => IndexOnHost,
            "device_ordinal" => DeviceOrdinal,
            "addr" => Address,
            "requested_bytes" => RequestedBytes,
            "allocation_bytes" => AllocationBytes,
            "bytes_allocated" => BytesAllocated,
            "bytes_reserved" => BytesReserved,
            "device_vendor" => DeviceVendor,
            _ => return None,
        })
    }
}

// (A bit per kind in `StatKinds::named`: the last kind's fits.)
const _: () = assert!((StatKind::DeviceVendor as u32) < u64::BITS);

/// A plane's stats by metadata id. Every id whose metadata names a stat is
/// that stat, as XProf's `XPlaneVisitor` maps them.
#[derive(Debug)]
pub struct StatKinds {
    ids: IdMap<StatKind>,
    /// One bit per kind the plane names.
    named: u64,
}

impl StatKinds {
    pub fn of(plane: &Plane<'_>) -> StatKinds {
        let ids: Vec<(i64, StatKind)> = plane.stat_names.iter().filter_map(|(&id, name)| Some((id, StatKind::of(name)?))).collect();
        let named = ids.iter().fold(0, |named, &(_, kind)| named | 1 << kind as u32);
        StatKinds { ids: IdMap::new(ids), named }
    }

    /// The stat of a stat metadata id, if rtfprof reads it.
    #[inline]
    pub fn get(&self, metadata_id: i64) -> Option<StatKind> {
        self.ids.get(metadata_id)
    }

    /// Whether the plane has metadata for the stat (its events may have it).
    pub fn names(&self, kind: StatKind) -> bool {
        self.named & 1 << kind as u32 != 0
    }

    /// The value of the first of `stats` that is a `kind`.
    pub fn find<'a>(&self, stats: impl IntoIterator<Item = Stat<'a>>, kind: StatKind) -> Option<StatValue<'a>> {
        if !self.names(kind) {
            return None;
        }
        stats.into_iter().find(|s| self.get(s.metadata_id) == Some(kind)).map(|s| s.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_known_by_every_id_of_their_name() {
        let mut plane = Plane::default();
        plane.stat_names.extend([(1, "step_num"), (2, "tf_op"), (9, "tf_op"), (5000, "hlo_op"), (3, "something else"), (1 << 40, "_r")]);
        let kinds = StatKinds::of(&plane);
        assert_eq!(
            [1, 2, 9, 5000, 1 << 40].map(|id| kinds.get(id)),
            [StatKind::StepNum, StatKind::TfOp, StatKind::TfOp, StatKind::HloOp, StatKind::IsRoot].map(Some)
        );
        assert_eq!([0, 3, 4, -1].map(|id| kinds.get(id)), [None; 4]);
        assert!(kinds.names(StatKind::TfOp) && kinds.names(StatKind::IsRoot) && !kinds.names(StatKind::GroupId));
        let stat = |metadata_id, v| Stat { metadata_id, value: StatValue::Int64(v) };
        let stats = [stat(3, 30), stat(9, 90), stat(2, 20), stat(1, 10)];
        assert_eq!(kinds.find(stats, StatKind::TfOp), Some(StatValue::Int64(90)));
        assert_eq!(kinds.find(stats, StatKind::StepNum), Some(StatValue::Int64(10)));
        assert_eq!(kinds.find(stats, StatKind::HloOp), None);
        assert_eq!(kinds.find(stats, StatKind::GroupId), None);
    }
}
