// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice What the transmitter calls on a message's recipient once the message is verified.
/// Same shape as CCTP V2's IMessageHandlerV2.
interface IMessageHandlerV2 {
    function handleReceiveFinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool);

    function handleReceiveUnfinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool);
}

/// @notice Test-only stand-in for Circle's MessageTransmitterV2, written from the public
/// interface (chains.md, CCTP V2) and checked against Circle's sources: same functions, events,
/// message layout, attestation scheme, checks in the same order and revert strings for the paths
/// a relayer meets, without upgradeability, pausing, a body size limit or roles beyond one owner.
/// As on CCTP, any contract may send a message (the receiving handler checks who sent it) and
/// anyone may relay a received one.
contract TestMessageTransmitterV2 {
    /// Circle's getter name (an immutable there), so clients read it the same way.
    uint32 public constant version = 1;
    /// Messages executed at or above this threshold go to the "finalized" handler.
    uint32 public constant FINALITY_THRESHOLD_FINALIZED = 2000;
    uint256 private constant SIGNATURE_LENGTH = 65;
    /// secp256k1n / 2: signatures with a larger s are malleable copies and are refused.
    uint256 private constant MAX_S = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    uint32 public immutable localDomain;
    address public owner;
    uint256 public signatureThreshold = 1;
    mapping(address => bool) public isEnabledAttester;
    /// 1 once a nonce has been received, as the real contract's `usedNonces`.
    mapping(bytes32 => uint256) public usedNonces;

    event MessageSent(bytes message);
    event MessageReceived(
        address indexed caller,
        uint32 sourceDomain,
        bytes32 indexed nonce,
        bytes32 sender,
        uint32 indexed finalityThresholdExecuted,
        bytes messageBody
    );
    event AttesterEnabled(address indexed attester);
    event AttesterDisabled(address indexed attester);
    event SignatureThresholdUpdated(uint256 oldThreshold, uint256 newThreshold);

    constructor(uint32 localDomain_, address attester) {
        localDomain = localDomain_;
        owner = msg.sender;
        isEnabledAttester[attester] = true;
        emit AttesterEnabled(attester);
        // As Circle's initializer: the empty nonce of a logged message can never be received.
        usedNonces[bytes32(0)] = 1;
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "Caller is not the owner");
        _;
    }

    function enableAttester(address attester) external onlyOwner {
        require(attester != address(0), "New attester must be nonzero");
        isEnabledAttester[attester] = true;
        emit AttesterEnabled(attester);
    }

    function disableAttester(address attester) external onlyOwner {
        isEnabledAttester[attester] = false;
        emit AttesterDisabled(attester);
    }

    function setSignatureThreshold(uint256 newThreshold) external onlyOwner {
        require(newThreshold != 0, "Invalid signature threshold");
        emit SignatureThresholdUpdated(signatureThreshold, newThreshold);
        signatureThreshold = newThreshold;
    }

    /// Emits the message with an empty nonce and no executed finality: the attesters fill both
    /// in before signing, so the logged message is never the one received on the destination.
    function sendMessage(
        uint32 destinationDomain,
        bytes32 recipient,
        bytes32 destinationCaller,
        uint32 minFinalityThreshold,
        bytes calldata messageBody
    ) external {
        require(destinationDomain != localDomain, "Domain is local domain");
        require(recipient != bytes32(0), "Recipient must be nonzero");
        emit MessageSent(
            abi.encodePacked(
                version,
                localDomain,
                destinationDomain,
                bytes32(0), // nonce
                bytes32(uint256(uint160(msg.sender))),
                recipient,
                destinationCaller,
                minFinalityThreshold,
                uint32(0), // finalityThresholdExecuted
                messageBody
            )
        );
    }

    /// Layout: version(4) sourceDomain(4) destinationDomain(4) nonce(32) sender(32)
    /// recipient(32) destinationCaller(32) minFinalityThreshold(4) finalityThresholdExecuted(4)
    /// body(from 148).
    function receiveMessage(bytes calldata message, bytes calldata attestation) external returns (bool) {
        _verifyAttestation(message, attestation);
        require(message.length >= 148, "Invalid message: too short");
        require(uint32(bytes4(message[8:12])) == localDomain, "Invalid destination domain");
        bytes32 destinationCaller = bytes32(message[108:140]);
        require(
            destinationCaller == bytes32(0) || destinationCaller == bytes32(uint256(uint160(msg.sender))),
            "Invalid caller for message"
        );
        require(uint32(bytes4(message[0:4])) == version, "Invalid message version");

        bytes32 nonce = bytes32(message[12:44]);
        require(usedNonces[nonce] == 0, "Nonce already used");
        usedNonces[nonce] = 1;

        uint32 sourceDomain = uint32(bytes4(message[4:8]));
        bytes32 sender = bytes32(message[44:76]);
        address recipient = address(uint160(uint256(bytes32(message[76:108]))));
        uint32 finalityThresholdExecuted = uint32(bytes4(message[144:148]));
        bytes calldata body = message[148:];
        // Handler reverts (an expired burn message, an unknown token...) bubble up unchanged.
        if (finalityThresholdExecuted >= FINALITY_THRESHOLD_FINALIZED) {
            require(
                IMessageHandlerV2(recipient).handleReceiveFinalizedMessage(
                    sourceDomain, sender, finalityThresholdExecuted, body
                ),
                "handleReceiveFinalizedMessage() failed"
            );
        } else {
            require(
                IMessageHandlerV2(recipient).handleReceiveUnfinalizedMessage(
                    sourceDomain, sender, finalityThresholdExecuted, body
                ),
                "handleReceiveUnfinalizedMessage() failed"
            );
        }
        emit MessageReceived(msg.sender, sourceDomain, nonce, sender, finalityThresholdExecuted, body);
        return true;
    }

    /// `signatureThreshold` 65-byte signatures over keccak256(message), by distinct enabled
    /// attesters in ascending address order (which is how duplicates are ruled out).
    function _verifyAttestation(bytes calldata message, bytes calldata attestation) private view {
        require(attestation.length == SIGNATURE_LENGTH * signatureThreshold, "Invalid attestation length");
        bytes32 digest = keccak256(message);
        address previous = address(0);
        for (uint256 i = 0; i < signatureThreshold; i++) {
            address signer = _recover(digest, attestation[i * SIGNATURE_LENGTH:(i + 1) * SIGNATURE_LENGTH]);
            require(signer > previous, "Invalid signature order or dupe");
            require(isEnabledAttester[signer], "Invalid signature: not attester");
            previous = signer;
        }
    }

    /// r(32) s(32) v(1) over the raw digest (no "Ethereum Signed Message" prefix).
    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address signer) {
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        require(uint256(s) <= MAX_S, "ECDSA: invalid signature 's' value");
        require(v == 27 || v == 28, "ECDSA: invalid signature 'v' value");
        signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "ECDSA: invalid signature");
    }
}
