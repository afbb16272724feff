//! Host scans: sequential left folds, the exact order the device's
//! look-back also follows between tiles.

/// Inclusive (`exclusive == false`) or exclusive scan of `src` into `out`.
pub fn scan<T: Copy, F: Fn(T, T) -> T>(src: &[T], out: &mut [T], identity: T, exclusive: bool, op: F) {
    let mut run: Option<T> = None;
    for (o, &x) in out.iter_mut().zip(src) {
        let incl = match run {
            Some(r) => op(r, x),
            None => x,
        };
        *o = if exclusive { run.unwrap_or(identity) } else { incl };
        run = Some(incl);
    }
}

/// [`scan`] over `data` in place.
pub fn scan_in_place<T: Copy, F: Fn(T, T) -> T>(data: &mut [T], identity: T, exclusive: bool, op: F) {
    let mut run: Option<T> = None;
    for x in data.iter_mut() {
        let incl = match run {
            Some(r) => op(r, *x),
            None => *x,
        };
        *x = if exclusive { run.unwrap_or(identity) } else { incl };
        run = Some(incl);
    }
}

/// Inclusive scan of `values` restarted at every run of equal consecutive `keys`.
pub fn scan_by_key<K: Copy + PartialEq, T: Copy, F: Fn(T, T) -> T>(keys: &[K], values: &[T], out: &mut [T], op: F) {
    let mut run: Option<T> = None;
    for i in 0..values.len() {
        let head = i == 0 || keys[i] != keys[i - 1];
        let v = match (head, run) {
            (false, Some(r)) => op(r, values[i]),
            _ => values[i],
        };
        out[i] = v;
        run = Some(v);
    }
}
