//! XProf's rules for kernels (`xprof/utils/kernel_stats_utils.cc`,
//! `xprof/convert/xplane_to_kernel_stats_db.cc`): which device events are
//! kernels, what their `kernel_details` stat says, which kernels use
//! TensorCores and which ops could, and how launches add up into rows.

use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use super::Kernel;

/// A kernel's launch as its `kernel_details` stat gives it
/// (`regs:168 static_shared:0 dynamic_shared:231424 grid:64,2,1
/// block:384,1,1 occ_pct:18.75`); what is missing or malformed keeps
/// XProf's default (0, dims of 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Launch {
    pub registers_per_thread: u32,
    pub static_shmem_bytes: u32,
    pub dynamic_shmem_bytes: u32,
    pub block_dim: [u32; 3],
    pub grid_dim: [u32; 3],
    pub occupancy_pct: f64,
}

impl Launch {
    /// XProf's `ParseKernelLaunchParams`.
    pub fn parse(details: &str) -> Launch {
        let mut launch =
            Launch { registers_per_thread: 0, static_shmem_bytes: 0, dynamic_shmem_bytes: 0, block_dim: [1; 3], grid_dim: [1; 3], occupancy_pct: 0.0 };
        let dims = |value: &str| -> Option<[u32; 3]> {
            let parts: Vec<&str> = value.split(',').collect();
            match parts.as_slice() {
                [x, y, z] => Some([x.parse().ok()?, y.parse().ok()?, z.parse().ok()?]),
                _ => None,
            }
        };
        for token in details.split([' ', '\n']) {
            let mut parts = token.split(':');
            let (Some(key), Some(value), None) = (parts.next(), parts.next(), parts.next()) else { continue };
            match key {
                "regs" => launch.registers_per_thread = value.parse().unwrap_or(launch.registers_per_thread),
                "static_shared" => launch.static_shmem_bytes = value.parse().unwrap_or(launch.static_shmem_bytes),
                "dynamic_shared" => launch.dynamic_shmem_bytes = value.parse().unwrap_or(launch.dynamic_shmem_bytes),
                "block" => launch.block_dim = dims(value).unwrap_or(launch.block_dim),
                "grid" => launch.grid_dim = dims(value).unwrap_or(launch.grid_dim),
                "occ_pct" => launch.occupancy_pct = value.parse().unwrap_or(launch.occupancy_pct),
                _ => {}
            }
        }
        launch
    }
}

/// A GPU's maker, as its XPlane device plane's `device_vendor` stat names
/// it: XProf's `kDeviceVendorNvidia` ("Nvidia") and `kDeviceVendorAMD`
/// ("AMD"), matched exactly; anything else, or no stat, is neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    Nvidia,
    Amd,
    Unknown,
}

impl Vendor {
    pub fn of(device_vendor: Option<&str>) -> Vendor {
        match device_vendor {
            Some("Nvidia") => Vendor::Nvidia,
            Some("AMD") => Vendor::Amd,
            _ => Vendor::Unknown,
        }
    }
}

/// XProf's `IsKernelUsingTensorCore`, which in XProf 2.24.2 decides by the
/// device's vendor: on NVIDIA, kernel-name patterns of cuBLAS, cuDNN and
/// CUTLASS TensorCore kernels (`xprof/utils/kernel_stats_utils.cc`); on
/// AMD, those of kernels on the matrix cores ([`uses_matrix_core`]); on a
/// device of no known vendor, none. (The AMD rule is not in the published
/// source of August 2026: it was read from 2.24.2's binary and checked on
/// its kernel_stats, name by name.)
pub fn uses_tensor_core(kernel_name: &str, vendor: Vendor) -> bool {
    match vendor {
        Vendor::Nvidia => uses_nvidia_tensor_core(kernel_name),
        Vendor::Amd => uses_matrix_core(kernel_name),
        Vendor::Unknown => false,
    }
}

fn uses_nvidia_tensor_core(kernel_name: &str) -> bool {
    const PATTERNS: [&str; 19] = [
        "16816",
        "c1688",
        "conv1x1",
        "conv2d_c1_k1",
        "dgrad_1x1_stride_2x2",
        "direct_group",
        "first_layer_wgrad_kernel",
        "h1688",
        "h884",
        "hmma",
        "i16832",
        "i8816",
        "s884",
        "s1688",
        "xmma_gemm",
        "xmma_implicit_gemm",
        "xmma_sparse_conv",
        "xmma_sparse_gemm",
        "xmma_warp_specialized_implicit_gemm",
    ];
    PATTERNS.iter().any(|p| kernel_name.contains(p))
}

/// XProf 2.24.2's rule for AMD's matrix cores (MFMA/WMMA): none of the
/// helper kernels of aiter's attention and MoE; else XLA's Triton GEMM
/// fusions, hipBLASLt's custom Tensile kernels, composable_kernel's XDL
/// and ck_tile GEMM/attention shapes, MIOpen's assembly convolutions,
/// aiter's kernels, MFMA/WMMA in the name, or a Tensile kernel's matrix
/// instruction `_MI<m>x<n>x<k>` (`_MI16x16x16`, `_MI16x16x1`).
pub fn uses_matrix_core(kernel_name: &str) -> bool {
    const NOT: [&str; 5] = ["_odo_", "_dq_convert", "_dq_shuffle", "topksoftmax", "DqAccPrezeroKernel"];
    const PATTERNS: [&str; 18] = [
        "gemm_fusion",
        "Custom_Cijk_",
        "_xdl",
        "gtcx",
        "miopenSp3AsmConvRage",
        "moe_gemm",
        "moe_mxgemm",
        "wmma",
        "aiter",
        "FMHA_FWD",
        "attn_fwd",
        "bwd_kernel_",
        "mfma",
        "TileGemmShape<",
        "TileFmhaShape<",
        "TileFmhaBwdShape<",
        "TileFlatmmShape<",
        "TileSageAttnShape<",
    ];
    if NOT.iter().any(|n| kernel_name.contains(n)) {
        return false;
    }
    PATTERNS.iter().any(|p| kernel_name.contains(p)) || kernel_name.match_indices("_MI").any(|(at, _)| is_mi_shape(&kernel_name[at + 3..]))
}

/// Whether `rest` starts with `<digits>x<digits>x<digits>`.
fn is_mi_shape(rest: &str) -> bool {
    let mut rest = rest;
    for dim in 0..3 {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        if dim < 2 {
            match rest.strip_prefix('x') {
                Some(after) => rest = after,
                None => return false,
            }
        }
    }
    true
}

/// XProf's `IsOpTensorCoreEligible`: TF's ops from its source, and JAX's
/// `dot_general` and `conv_general_dilated`, which XProf 2.24.2 takes as
/// eligible too (its kernel_stats on the JAX H200 traces: every op ending
/// in either is eligible, no other op whose kernel uses no TensorCore is;
/// the source read, openxla/xprof of August 2026, lists TF's alone).
pub fn op_tensor_core_eligible(op_name: &str) -> bool {
    const JAX: [&str; 2] = ["dot_general", "conv_general_dilated"];
    if JAX.iter().any(|e| op_name.ends_with(e)) {
        return true;
    }
    const ENDS: [&str; 12] = [
        "Conv2D",
        "Conv2DBackpropFilter",
        "Conv2DBackpropInput",
        "Conv3D",
        "DepthwiseConv2dNative",
        "DepthwiseConv2dNativeBackpropFilter",
        "DepthwiseConv2dNativeBackpropInput",
        "/MatMul",
        "FusedMatMul",
        "/CudnnRNN",
        "XlaDot",
        "XlaDotV2",
    ];
    const CONTAINS: [&str; 4] = ["BatchMatMul", "CudnnRNNV", "CudnnRNNForward", "CudnnRNNBackprop"];
    ENDS.iter().any(|e| op_name.ends_with(e)) || CONTAINS.iter().any(|c| op_name.contains(c))
}

/// XProf's `IsEinsumTensorCoreEligible`: an equation of two inputs.
pub fn einsum_tensor_core_eligible(equation: &str) -> bool {
    let mut sides = equation.split("->");
    match (sides.next(), sides.next(), sides.next()) {
        (Some(inputs), Some(_), None) if !equation.is_empty() => inputs.split(',').count() == 2,
        _ => false,
    }
}

/// What a kernel row is keyed on (XProf's `KernelReportLessThanComparator`
/// fields), with the op as an id to name later.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key<'a> {
    pub name: &'a str,
    pub grid_dim: [u32; 3],
    pub block_dim: [u32; 3],
    pub registers_per_thread: u32,
    pub static_shmem_bytes: u32,
    pub dynamic_shmem_bytes: u32,
    pub uses_tensor_core: bool,
    pub op_tensor_core_eligible: bool,
    pub op: u32,
}

/// The launches of one key: the first one's occupancy (XProf keeps the
/// first report of a key; `None` where the trace gives none), count and
/// durations in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sums {
    pub occupancy_pct: Option<f64>,
    pub occurrences: i64,
    pub total_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
}

impl Key<'_> {
    /// The table row of this key's launches, its op named `op_name`.
    pub fn row(&self, op_name: String, sums: &Sums) -> Kernel {
        Kernel {
            job: String::new(),
            kernel_name: self.name.to_owned(),
            op_name,
            registers_per_thread: self.registers_per_thread,
            static_shmem_bytes: self.static_shmem_bytes,
            dynamic_shmem_bytes: self.dynamic_shmem_bytes,
            block_dim: self.block_dim,
            grid_dim: self.grid_dim,
            occupancy_pct: sums.occupancy_pct,
            is_op_tensor_core_eligible: self.op_tensor_core_eligible,
            is_kernel_using_tensor_core: self.uses_tensor_core,
            occurrences: sums.occurrences,
            total_ns: sums.total_ns,
            min_ns: sums.min_ns,
            max_ns: sums.max_ns,
        }
    }
}

/// Kernel launches added up by key, in the order first seen.
#[derive(Clone, Debug, Default)]
pub struct Launches<'a> {
    pub keys: Vec<Key<'a>>,
    pub sums: Vec<Sums>,
    index: FxHashMap<Key<'a>, usize>,
}

impl<'a> Launches<'a> {
    /// One launch (XProf's `InsertOrUpdateKernelReport`). Kernels of no
    /// duration are left out, as XProf leaves them. Returns where the key
    /// is, if it is there now (for [`Launches::add_at`]).
    pub fn add(&mut self, key: Key<'a>, occupancy_pct: Option<f64>, duration_ns: i64) -> Option<usize> {
        if duration_ns == 0 {
            return self.index.get(&key).copied();
        }
        match self.index.get(&key) {
            Some(&at) => {
                self.add_at(at, duration_ns);
                Some(at)
            }
            None => {
                let at = self.keys.len();
                self.index.insert(key, at);
                self.keys.push(key);
                self.sums.push(Sums { occupancy_pct, occurrences: 1, total_ns: duration_ns, min_ns: duration_ns, max_ns: duration_ns });
                Some(at)
            }
        }
    }

    /// One more launch of the key at `at` (as [`Launches::add`] returned
    /// it): the same sums, without hashing the key again.
    pub fn add_at(&mut self, at: usize, duration_ns: i64) {
        if duration_ns == 0 {
            return;
        }
        let s = &mut self.sums[at];
        s.occurrences += 1;
        s.total_ns += duration_ns;
        s.min_ns = s.min_ns.min(duration_ns);
        s.max_ns = s.max_ns.max(duration_ns);
    }

    /// Another set of launches, seen after these; `op` renumbers its ops.
    pub fn append(&mut self, other: Launches<'a>, op: impl Fn(u32) -> u32) {
        for (key, sums) in other.keys.into_iter().zip(other.sums) {
            let key = Key { op: op(key.op), ..key };
            match self.index.get(&key) {
                Some(&at) => {
                    let s = &mut self.sums[at];
                    s.occurrences += sums.occurrences;
                    s.total_ns += sums.total_ns;
                    s.min_ns = s.min_ns.min(sums.min_ns);
                    s.max_ns = s.max_ns.max(sums.max_ns);
                }
                None => {
                    self.index.insert(key, self.keys.len());
                    self.keys.push(key);
                    self.sums.push(sums);
                }
            }
        }
    }
}

/// XProf's order of kernel rows of equal total duration.
pub fn key_order(a: &Kernel, b: &Kernel) -> Ordering {
    fn key(k: &Kernel) -> impl Ord + '_ {
        (
            &k.job,
            &k.kernel_name,
            k.grid_dim,
            k.block_dim,
            k.registers_per_thread,
            k.static_shmem_bytes,
            k.dynamic_shmem_bytes,
            k.is_kernel_using_tensor_core,
            k.is_op_tensor_core_eligible,
            &k.op_name,
        )
    }
    key(a).cmp(&key(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_params_parse_as_xprof_parses_them() {
        let l = Launch::parse("regs:168 static_shared:0 dynamic_shared:231424 grid:64,2,1 block:384,1,1 occ_pct:18.75");
        assert_eq!((l.registers_per_thread, l.static_shmem_bytes, l.dynamic_shmem_bytes), (168, 0, 231424));
        assert_eq!((l.grid_dim, l.block_dim, l.occupancy_pct), ([64, 2, 1], [384, 1, 1], 18.75));
        // Malformed tokens keep the defaults.
        let l = Launch::parse("regs:x grid:1,2 block:a:b occ_pct: junk");
        assert_eq!((l.registers_per_thread, l.grid_dim, l.block_dim, l.occupancy_pct), (0, [1; 3], [1; 3], 0.0));
    }

    #[test]
    fn tensor_core_rules() {
        assert!(uses_tensor_core("sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x256x32", Vendor::Nvidia));
        assert!(!uses_tensor_core("wrapped_subtract_1", Vendor::Nvidia));
        assert!(op_tensor_core_eligible("model/dense/MatMul"));
        assert!(op_tensor_core_eligible("jit(step)/dot_general"));
        assert!(op_tensor_core_eligible("jit(step)/conv0/conv_general_dilated"));
        assert!(!op_tensor_core_eligible("jit(step)/transpose"));
        assert!(einsum_tensor_core_eligible("ab,bc->ac"));
        assert!(!einsum_tensor_core_eligible("ab->ba") && !einsum_tensor_core_eligible(""));
    }

    /// XProf 2.24.2's answers (kernel_stats on the ROCm fixture with these
    /// names given to its kernels and its `device_vendor` set to each).
    #[test]
    fn tensor_core_rules_by_vendor() {
        use Vendor::*;
        assert_eq!(
            [Some("Nvidia"), Some("AMD"), Some("NVIDIA"), Some("amd"), Some(""), None].map(Vendor::of),
            [Nvidia, Amd, Unknown, Unknown, Unknown, Unknown]
        );
        let by_vendor = |name| [Nvidia, Amd, Unknown].map(|v| uses_tensor_core(name, v));
        // NVIDIA's patterns on NVIDIA alone; none without a vendor.
        for name in ["xmma_gemm", "volta_h884gemm", "16816", "conv1x1"] {
            assert_eq!(by_vendor(name), [true, false, false], "{name}");
        }
        let amd = [
            "gemm_fusion_dot_6.kd",
            "Custom_Cijk_Ailk_Bljk_HHS_BH_MT16x192x128_MI16x16x1_3",
            "Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MI16x16x16x1_SN_1LDSB0",
            "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_CMS",
            "x_MI1x1x1",
            "abcmfmadef",
            "wmma",
            "a_xdl",
            "gtcx",
            "miopenSp3AsmConvRage",
            "moe_gemm",
            "moe_mxgemm",
            "aiter",
            "FMHA_FWD",
            "attn_fwd",
            "bwd_kernel_",
            "ck_tile::kentry<ck_tile::gfx950_t, 2, ck_tile::FmhaFwdKernel<ck_tile::TileFmhaShape<ck_tile::sequence<128>",
            "TileFmhaBwdShape<",
            "TileGemmShape<",
            "TileFlatmmShape<",
            "TileSageAttnShape<",
            "odo_mfma",
        ];
        for name in amd {
            assert_eq!(by_vendor(name), [false, true, false], "{name}");
        }
        let neither = [
            "Cijk_",
            "Custom_Cijk",
            "MI16x16x16",
            "x_MI16x16",
            "x_MI16x16x",
            "x_MIx16x16",
            "x_mi16x16x16",
            "MFMA",
            "ATTN_FWD",
            "xdl",
            "gemm",
            "TileXyzShape<",
            "TileFmhaShape",
            "loop_reduce_fusion.kd",
            // aiter's helpers, whatever else the name says.
            "k_odo_mfma",
            "x_dq_convert_mfma",
            "x_dq_shuffle_mfma",
            "topksoftmax_mfma",
            "DqAccPrezeroKernel_mfma",
            "x_MI16x16x1_odo_",
        ];
        for name in neither {
            assert_eq!(by_vendor(name), [false; 3], "{name}");
        }
    }

    #[test]
    fn launches_add_up_by_key_keeping_the_first_occupancy() {
        let key = Key {
            name: "k",
            grid_dim: [1; 3],
            block_dim: [1; 3],
            registers_per_thread: 8,
            static_shmem_bytes: 0,
            dynamic_shmem_bytes: 0,
            uses_tensor_core: false,
            op_tensor_core_eligible: false,
            op: 3,
        };
        let mut a = Launches::default();
        a.add(key, Some(50.0), 10);
        a.add(key, Some(75.0), 4);
        a.add(key, Some(75.0), 0);
        let mut b = Launches::default();
        b.add(Key { op: 1, ..key }, Some(25.0), 7);
        a.append(b, |op| op + 2);
        assert_eq!(a.keys.len(), 1);
        assert_eq!(a.sums[0], Sums { occupancy_pct: Some(50.0), occurrences: 3, total_ns: 21, min_ns: 4, max_ns: 10 });
    }
}
