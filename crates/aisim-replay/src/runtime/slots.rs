//! `Slots`: values parked under a small index until their event comes
//! (turns waiting for their dispatch time, transfers under way); freed
//! indices are reused, so the table follows what is parked at once.

/// Parked values by index.
#[derive(Debug)]
pub(crate) struct Slots<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slots<T> {
    /// Parks `value`; returns its index.
    pub fn park(&mut self, value: T) -> u32 {
        match self.free.pop() {
            Some(s) => {
                self.items[s as usize] = Some(value);
                s
            }
            None => {
                self.items.push(Some(value));
                self.items.len() as u32 - 1
            }
        }
    }

    /// Takes the value parked at `slot` (which must hold one).
    pub fn take(&mut self, slot: u32) -> T {
        let value = self.items[slot as usize]
            .take()
            .expect("an event's slot holds its value");
        self.free.push(slot);
        value
    }

    /// Values parked.
    pub fn len(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Slots;

    #[test]
    fn slots_are_reused_and_counted() {
        let mut s = Slots::default();
        let (a, b) = (s.park('a'), s.park('b'));
        assert_eq!((a, b, s.len()), (0, 1, 2));
        assert_eq!(s.take(a), 'a');
        assert_eq!(s.park('c'), a, "a freed slot is reused");
        assert_eq!((s.take(b), s.take(a), s.len()), ('b', 'c', 0));
    }
}
