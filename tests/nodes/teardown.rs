//! A runtime that shuts down lets go of its nodes: nothing they spawned keeps its executor,
//! and with it every node's DDS readers, writers and sockets, alive once the runtime is
//! dropped. (A task holding the executor that runs it is a cycle that never frees; the whole
//! test binary, dozens of runtimes, once ran out of file descriptors that way.)

use std::time::Duration;

use gpu_planning::ros::{ParamsFile, RosArgs, RosRuntime};

use crate::common;

#[test]
fn every_node_is_freed_with_its_runtime() {
    for name in gpu_planning::nodes::NODE_NAMES {
        let rt = RosRuntime::new(
            RosArgs::default(),
            ParamsFile::default(),
            Some(common::unique_domain()),
        )
        .unwrap();
        gpu_planning::nodes::start(&rt, &[name]).unwrap();
        let executor = std::sync::Arc::downgrade(rt.executor());
        let running = common::run_in_background(&rt);
        std::thread::sleep(Duration::from_millis(200));
        rt.shutdown().trigger();
        running.join().unwrap();
        drop(rt);
        assert!(
            executor.upgrade().is_none(),
            "{name}: its executor outlives the dropped runtime"
        );
    }
}
