//! `threads`: worker threads that allocate blocks of 16 B to 64 KiB (skewed
//! small), keep a working set replaced in random order, and hand a share of
//! their blocks to the next thread to free: the cross-thread pattern that
//! makes glibc malloc grow one arena per thread.

use super::Rng;
use std::sync::mpsc;

/// Live blocks each thread keeps.
const WORKING_SET: usize = 2_000;

pub fn run(threads: usize, ops_per_thread: u64) {
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..threads).map(|_| mpsc::channel::<Vec<u8>>()).unzip();
    let handles: Vec<_> = receivers
        .into_iter()
        .enumerate()
        .map(|(id, inbox)| {
            let next = senders[(id + 1) % threads].clone();
            std::thread::spawn(move || worker(id as u64, ops_per_thread, inbox, next))
        })
        .collect();
    drop(senders);
    let mut checksum = 0u64;
    for handle in handles {
        checksum = checksum.wrapping_add(handle.join().unwrap_or(0));
    }
    println!("threads={threads} ops_per_thread={ops_per_thread} checksum={checksum}");
}

fn worker(id: u64, ops: u64, inbox: mpsc::Receiver<Vec<u8>>, next: mpsc::Sender<Vec<u8>>) -> u64 {
    let mut rng = Rng::new(id.wrapping_mul(7919) + 1);
    let mut live: Vec<Vec<u8>> = Vec::with_capacity(WORKING_SET);
    let mut checksum = 0u64;
    for op in 0..ops {
        let size = rng.skewed_size();
        let mut block = vec![0u8; size];
        block[size - 1] = op as u8;
        if live.len() < WORKING_SET {
            live.push(block);
        } else {
            let slot = rng.below(live.len() as u64) as usize;
            let old = std::mem::replace(&mut live[slot], block);
            // Every fourth replaced block is freed by another thread.
            if op % 4 == 0 {
                let _ = next.send(old);
            }
        }
        while let Ok(foreign) = inbox.try_recv() {
            checksum = checksum.wrapping_add(foreign.len() as u64);
        }
    }
    checksum.wrapping_add(live.iter().map(|b| b.len() as u64).sum::<u64>())
}
